#!/usr/bin/env python3
"""Where a kernel's instructions and stalls go: reads the CSV of
`ncu -i REPORT --page source --csv --print-source cuda,sass` and prints the
executed thread instructions per cell-update by opcode and by source line,
and the warp-state samples by stall reason.

Usage: ncu_lines.py CSV CELLS [TOP]
"""
import collections
import csv
import re
import sys


def main():
    path, cells = sys.argv[1], float(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    by_line, text = collections.Counter(), {}
    by_op = collections.Counter()
    stalls, stall_columns = collections.Counter(), {}
    source_file, column = None, None
    for row in csv.reader(open(path)):
        if not row:
            continue
        if row[0] == "File Path":
            source_file = row[1].split("/")[-1]
            continue
        if row[0] == "Line No":
            column = row.index("Instructions Executed")
            stall_columns = {name[6:]: c for c, name in enumerate(row) if name.startswith("stall_") and "(" not in name}
            continue
        if column is None or row[0] == "Function Name":
            continue
        try:
            line = int(row[0])
        except ValueError:
            continue
        per_cell = int(row[column] or 0) * 32 / cells
        by_line[(source_file, line)] += per_cell
        text[(source_file, line)] = row[1].strip()[:100]
    # The SASS rows (empty line number, an address) carry the opcodes; an
    # instruction inlined from several lines is listed under each of them.
    seen = set()
    for row in csv.reader(open(path)):
        if column is None or len(row) <= column or row[0] or not row[2].startswith("0x") or row[2] in seen:
            continue
        seen.add(row[2])
        for name, c in stall_columns.items():
            stalls[name] += int(row[c] or 0)
        op = re.sub(r"^@!?U?P\w+\s+", "", row[3].strip()).split()
        if op:
            by_op[op[0].split(".")[0]] += int(row[column] or 0) * 32 / cells
    print(f"total: {sum(by_op.values()):.1f} thread instructions per cell-update (lines sum to more: inlined code counts once per line it comes from)")
    if by_op:
        print("by opcode: " + ", ".join(f"{k} {v:.1f}" for k, v in by_op.most_common(24)))
    total = sum(stalls.values()) or 1
    print("warp samples by state: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in stalls.most_common(8)))
    print("by source line:")
    for (f, line), v in by_line.most_common(top):
        print(f"{v:7.1f}  {f}:{line}  {text[(f, line)]}")


if __name__ == "__main__":
    main()
