#!/usr/bin/env python3
"""Validates lctrace's CI outputs against the public schemas (used by CIFormatsTests).

    validate-ci-formats.py sarif SCHEMA.json FILE.sarif
    validate-ci-formats.py junit SCHEMA.xsd FILE.xml

Needs `jsonschema` (SARIF) or `xmlschema` (JUnit) from PyPI: .ci/run installs them in the
private virtualenv .ci/venv. Exit 0 valid, 1 invalid (the errors printed), 3 validator missing.
"""
import json, sys

kind, schema_path, doc_path = sys.argv[1:4]
if kind == "sarif":
    try:
        import jsonschema
    except ImportError:
        print("jsonschema is not installed"); sys.exit(3)
    schema = json.load(open(schema_path))
    doc = json.load(open(doc_path))
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:20]:
        print("/".join(str(p) for p in e.absolute_path) + ": " + e.message[:300])
    sys.exit(1 if errors else 0)
elif kind == "junit":
    try:
        import xmlschema
    except ImportError:
        print("xmlschema is not installed"); sys.exit(3)
    schema = xmlschema.XMLSchema(schema_path)
    errors = list(schema.iter_errors(doc_path))
    for e in errors[:20]:
        print(str(e)[:500])
    sys.exit(1 if errors else 0)
print("unknown kind " + kind); sys.exit(64)
