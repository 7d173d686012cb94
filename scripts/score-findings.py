#!/usr/bin/env python3
"""Scores `lctrace report --format json` against an expected-findings file.

usage: score-findings.py EXPECTED.json REPORT.json

EXPECTED.json holds "expected" (rule, session, vc, since), optionally
"also_acceptable_leaks" (instances for which LC301/LC302 is also right),
"must_not_flag" (instances that must get no LC2xx or LC301 beyond those expected),
and "truncated_session_not_scored". Prints precision, recall and F1 per family and
exits 1 when any family is below --min-f1 (default 0.95) or a must-not-flag instance
was flagged.
"""
import json, sys, argparse

FAMILIES = {"1": "orphans", "2": "unbalanced", "3": "leaks", "4": "gaps", "5": "scene", "9": "quality"}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("expected"); ap.add_argument("report")
    ap.add_argument("--min-f1", type=float, default=0.95)
    a = ap.parse_args()
    exp = json.load(open(a.expected)); rep = json.load(open(a.report))
    skip = exp.get("truncated_session_not_scored")
    core = {r["rule"] for r in exp["expected"]}
    core |= set(exp.get("scored_rules", []))
    key = lambda f: (f["rule"], f["session"], f["vc"], f["since"])
    expected = {key(f) for f in exp["expected"] if f["session"] != skip}
    acceptable = {(s["session"], s["vc"], s["since"]) for s in exp.get("also_acceptable_leaks", [])}
    got = {key(f) for f in rep["findings"] if f["rule"] in core and f["session"] != skip}
    ok = True
    for fam_digit, fam in FAMILIES.items():
        e = {k for k in expected if k[0][2] == fam_digit}
        g = {k for k in got if k[0][2] == fam_digit}
        if fam == "leaks":
            g = {k for k in g if k in e or (k[1], k[2], k[3]) not in acceptable}
        if not e and not g:
            continue
        tp = len(e & g); p = tp / len(g) if g else 1.0; r = tp / len(e) if e else 1.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        print(f"{fam:11s} expected {len(e):3d}  found {len(g):3d}  tp {tp:3d}  precision {p:.3f}  recall {r:.3f}  F1 {f1:.3f}")
        for k in sorted(e - g): print("   missed:", k)
        for k in sorted(g - e): print("   extra: ", k)
        if f1 < a.min_f1: ok = False
    flagged = 0
    for m in exp.get("must_not_flag", []):
        inst = (m["session"], m["vc"], m["since"])
        bad = [f for f in rep["findings"] if (f["session"], f["vc"], f["since"]) == inst
               and (f["rule"].startswith("LC2") or f["rule"] == "LC301") and key(f) not in expected]
        for f in bad:
            flagged += 1
            print(f"   look-alike flagged: {f['rule']} {inst} ({m.get('why','')}): {f['message']}")
    print(f"look-alikes flagged: {flagged} of {len(exp.get('must_not_flag', []))}")
    sys.exit(0 if ok and flagged == 0 else 1)

main()
