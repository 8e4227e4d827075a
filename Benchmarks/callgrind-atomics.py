#!/usr/bin/env python3
"""Counts the atomic read-modify-writes (lock-prefixed instructions, xchg with memory, mfence)
that one operation of a strata-bench workload executes, from a callgrind profile with
per-instruction counts, and says which functions execute them.

An uncontended atomic read-modify-write costs a few nanoseconds here and drains the store buffer;
instruction counts do not show them. Profile one workload's Strata body, then divide by the
number of operations in the profile (for a workload that makes one scope per operation, the
calls of `Scope.makeScope`):

    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \\
      --callgrind-out-file=cg.out --toggle-collect='<the workload's Strata closure>_TA' \\
      .build/release/strata-bench --quick --workload server-request
    OPS=$(grep -A1 '^cfn=.*ScopeC04makeB0_4name' cg.out | grep calls | awk -F'[= ]' '{s+=$2} END {print s}')
    python3 Benchmarks/callgrind-atomics.py cg.out "$OPS"

(`nm .build/release/strata-bench | grep <workload name>` lists the closures; the Strata body is
the one the workload's `strata:` closure compiles to.)
"""
import collections
import re
import subprocess
import sys


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: callgrind-atomics.py CALLGRIND_OUT OPERATIONS")
    path, operations = sys.argv[1], int(sys.argv[2])
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    function_at: dict[tuple[str, int], str] = {}
    obj = function = None
    after_calls = False
    with open(path) as profile:
        for line in profile:
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("fn="):
                function = line[3:].strip()
            elif line.startswith("calls="):
                after_calls = True  # the next cost line is the call's inclusive cost
            elif line.startswith("0x"):
                if after_calls:
                    after_calls = False
                    continue
                fields = line.split()
                address, executed = int(fields[0], 16), int(fields[2]) if len(fields) > 2 else 0
                counts[obj][address] += executed
                function_at[(obj, address)] = function
            else:
                after_calls = False
    per_object: collections.Counter = collections.Counter()
    per_site: collections.Counter = collections.Counter()
    for obj, executed_at in counts.items():
        if not obj or not obj.startswith("/"):
            continue
        listing = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True
        ).stdout
        for line in listing.splitlines():
            match = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
            if not match:
                continue
            address, instruction = int(match.group(1), 16), match.group(2)
            executed = executed_at.get(address)
            if not executed:
                continue
            is_atomic = (
                instruction.startswith("lock")
                or (instruction.startswith("xchg") and "(" in instruction)
                or instruction.startswith("mfence")
            )
            if is_atomic:
                per_object[obj.split("/")[-1]] += executed
                mnemonic = " ".join(instruction.split()[:2])
                per_site[(function_at[(obj, address)][:110], mnemonic)] += executed
    total = sum(per_object.values()) / operations
    print(f"atomic read-modify-writes per operation: {total:.2f}")
    for name, executed in per_object.most_common():
        print(f"  {executed / operations:6.2f}  in {name}")
    for (function, mnemonic), executed in per_site.most_common(40):
        print(f"  {executed / operations:6.2f}  {mnemonic:22s} {function}")


if __name__ == "__main__":
    main()
