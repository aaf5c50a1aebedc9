"""The benchmark harness's CPU-only parts: the peer table on a shipped instance."""
import argparse
import shutil

from benchmarks.peers import scipy_restarts, table_peers_qap
from lsmgpu.problems import QAP


def test_peer_table_runs_every_method_on_the_cpu(tmp_path):
    """peers-qap runs lsmgpu and both scipy heuristics for each budget, with gaps to the best known."""
    (tmp_path / "qaplib").mkdir()
    for suffix in (".dat", ".sln"):
        shutil.copy(QAP.shipped("tai12a").with_suffix(suffix), tmp_path / "qaplib")
    args = argparse.Namespace(data=str(tmp_path), peer_qap="tai12a", peer_seconds="0.1,0.2")
    rows = []
    table_peers_qap(args, lambda: "cpu", rows.append)
    assert [(r["strategy"], r["budget_s"]) for r in rows] == [
        (m, b) for b in (0.1, 0.2) for m in ("lsmgpu tabu search", "scipy 2opt", "scipy faq")]
    assert all(r["gap_pct"] >= 0 and r["seconds"] >= r["budget_s"] * 0.9 for r in rows)


def test_scipy_restarts_report_lsmgpu_fitness():
    """The scipy wrapper's best is a real assignment cost (checked against QAP.evaluate inside)."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    best, seconds, restarts = scipy_restarts(problem, "faq", 0.05, 0)
    assert restarts >= 1 and best >= problem.best_known
