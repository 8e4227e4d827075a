#!/usr/bin/env python3
"""Turns several `strata-bench --format json` runs into the README's benchmark table.

Usage:
    for i in 1 2 3; do swift run -c release strata-bench --format json > run$i.json; done
    python3 Benchmarks/readme-table.py --machine "2-core Linux VM" run1.json run2.json run3.json

Every figure is the median over the runs of each run's median, with the smallest and largest of
those medians in brackets: the spread a reader can expect from a fresh clone on a machine of the
same kind. Nothing in the table is typed by hand.
"""

import argparse
import datetime
import json
import statistics
import sys


def load(paths):
    runs = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            runs.append(json.load(handle))
    return runs


def cell(values, unit_scale=1.0, digits=1):
    values = [value / unit_scale for value in values]
    median = statistics.median(values)
    return f"{median:.{digits}f} [{min(values):.{digits}f}–{max(values):.{digits}f}]"


def table(runs, machine, date):
    by_workload = {}
    order = []
    for run in runs:
        for result in run["results"]:
            name = result["workload"]
            if name not in by_workload:
                by_workload[name] = []
                order.append(name)
            by_workload[name].append(result)

    lines = [
        f"Measured {date} on {machine}: {len(runs)} full default runs of `strata-bench`"
        " (each run interleaves Strata with its baselines); median of the runs' medians,"
        " smallest and largest in brackets.",
        "",
        "| workload | Strata ns/op | manual ns/op | Strata / manual | allocations/op |",
        "|---|--:|--:|--:|--:|",
    ]
    for name in order:
        results = by_workload[name]
        strata = [r["ns_per_op"]["strata"] for r in results if r["ns_per_op"].get("strata")]
        manual = [r["ns_per_op"]["manual"] for r in results if r["ns_per_op"].get("manual")]
        ratios = [
            r["ns_per_op"]["strata"] / r["ns_per_op"]["manual"]
            for r in results
            if r["ns_per_op"].get("strata") and r["ns_per_op"].get("manual")
        ]
        allocations = [r["allocs_per_op"]["strata"] for r in results if r.get("allocs_per_op", {}).get("strata") is not None]
        big = strata and statistics.median(strata) >= 100_000
        scale, unit = (1_000_000.0, " ms") if big else (1.0, "")
        lines.append(
            "| {} | {} | {} | {} | {} |".format(
                f"`{name}`",
                cell(strata, scale, 2 if big else 1) + unit if strata else "–",
                cell(manual, scale, 2 if big else 1) + unit if manual else "–",
                cell(ratios, digits=2) + "×" if ratios else "–",
                f"{statistics.median(allocations):g}" if allocations else "–",
            )
        )

    floors = []
    for name in order:
        results = [r for r in by_workload[name] if r.get("minimal-scope_reference_ns_per_op")]
        if not results:
            continue
        floor = [r["minimal-scope_reference_ns_per_op"] for r in results]
        over_manual = [r["minimal-scope_reference_ns_per_op"] / r["ns_per_op"]["manual"] for r in results]
        strata_over = [r["ns_per_op"]["strata"] / r["minimal-scope_reference_ns_per_op"] for r in results]
        floors.append(
            f"| `{name}` | {cell(floor)} | {cell(over_manual, digits=2)}× | {cell(strata_over, digits=2)}× |"
        )
    if floors:
        lines += [
            "",
            "| floor: a minimal scope with Strata's guarantees (`Benchmarks/MinimalScope.swift`) | ns/op"
            " | minimal / manual | Strata / minimal |",
            "|---|--:|--:|--:|",
        ] + floors

    ratio_ids = []
    for run in runs:
        for ratio_id in run.get("ratios", {}):
            if ratio_id not in ratio_ids:
                ratio_ids.append(ratio_id)
    if ratio_ids:
        lines += ["", "| target | measured | limit |", "|---|--:|--:|"]
        for ratio_id in ratio_ids:
            measured = [run["ratios"][ratio_id]["measured"] for run in runs if ratio_id in run.get("ratios", {})]
            measured = [value for value in measured if value is not None]
            limit = next(run["ratios"][ratio_id]["target"] for run in runs if ratio_id in run.get("ratios", {}))
            lines.append(f"| `{ratio_id}` | {cell(measured, digits=2) if measured else '–'} | ≤ {limit:g} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="JSON files written by strata-bench --format json")
    parser.add_argument("--machine", required=True, help="the machine kind, e.g. '2-core Linux VM'")
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    arguments = parser.parse_args()
    runs = load(arguments.runs)
    if len(runs) < 3:
        print("warning: publish medians of at least three runs", file=sys.stderr)
    print(table(runs, arguments.machine, arguments.date))


if __name__ == "__main__":
    main()
