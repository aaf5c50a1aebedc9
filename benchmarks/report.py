"""One report from several runs of ``python -m benchmarks`` (the GPU machine runs a command for
at most 10 minutes and sends back a few files, so a full report is several runs):

    python -m benchmarks.report RUN... --out DIR

Every row gets its run's device and commit (columns). RUN is a run's ``results.json``; or ``LOG::COMMAND`` for a run whose files did not come back
(the harness prints every row as it measures it, so the log holds them, its table cut short
where the run was); or ``CSV::COMMAND``, a table the harness wrote in an earlier report (several
CSVs of one run name its command once). The
rows keep their runs' order; every run's device, date, commit and command head the report; tsp-quality's per-run means are replaced by the means over all its
instance rows (runs split by size). Markdown, CSV, JSON and plots as the harness writes them.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
from pathlib import Path

from .__main__ import write
from .tsp_quality import mean_rows


def rows_of_log(path) -> list[dict]:
    """The rows a run printed (one dict per line) in its log."""
    return [ast.literal_eval(line) for line in Path(path).read_text().splitlines() if line.startswith("{'table': ")]


def header_of_log(path) -> dict:
    """The device, date and commit a run printed in its log's report header
    ("device: ... · date: ... · commit: ..."; a run cut off by an interrupt prints it too), or {}."""
    for line in Path(path).read_text().splitlines():
        if line.startswith("device: "):
            return dict(part.split(": ", 1) for part in line.split(" · ") if ": " in part)
    return {}


def read_run(spec: str) -> tuple[list[dict], dict]:
    """(rows, meta) of one run: its results.json, LOG::COMMAND or CSV::COMMAND."""
    if "::" in spec:
        path, command = spec.split("::", 1)
        meta = dict(command=f"{command} (rows from {'its CSV files' if path.endswith('.csv') else 'its log'})")
        if not path.endswith(".csv"):
            meta = {**header_of_log(path), **meta}
        if command.startswith("LSMGPU_COMMIT="):           # the commit the command was run at
            meta["commit"] = command.split()[0].split("=", 1)[1]
        if path.endswith(".csv"):
            with open(path, newline="") as f:
                return list(csv.DictReader(f)), meta
        return rows_of_log(path), meta
    data = json.loads(Path(spec).read_text())
    return data["rows"], data["meta"]


def merge(specs: list[str]) -> tuple[list[dict], dict]:
    """All runs' rows, each with its run's commit (tsp-quality means recomputed over every run,
    with the commits of their rows), and one meta naming each run."""
    rows, metas = [], []
    for spec in specs:
        run_rows, meta = read_run(spec)
        rows += [{**row, "device": row.get("device") or meta.get("device", "unknown"),
                  "commit": row.get("commit") or meta.get("commit", "unknown")} for row in run_rows]
        metas.append(meta)
    quality = [r for r in rows if r["table"] == "tsp-quality"]
    if quality:
        rows = [r for r in rows if r["table"] != "tsp-quality" or not str(r["instance"]).startswith("mean of")]
        runs = [r for r in rows if r["table"] == "tsp-quality"]
        devices, commits = (" + ".join(dict.fromkeys(r[key] for r in runs)) for key in ("device", "commit"))
        rows += [{**row, "device": devices, "commit": commits} for row in mean_rows(quality)]

    def joined(key):
        return " + ".join(dict.fromkeys(str(m[key]) for m in metas if key in m)) or "unknown"
    meta = dict(device=joined("device"), date=joined("date"), commit=joined("commit"),
                command="`; `".join(dict.fromkeys(m["command"] for m in metas)))   # a run's CSVs: one command
    return rows, meta


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report")
    parser.add_argument("runs", nargs="+", help="results.json files, LOG::COMMAND or CSV::COMMAND")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    rows, meta = merge(args.runs)
    write(rows, Path(args.out), meta)
    print(f"{len(rows)} rows of {len(args.runs)} runs -> {Path(args.out, 'results.md')}")


if __name__ == "__main__":
    main()
