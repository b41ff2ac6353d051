"""schema_check.py SCHEMA [FILE]: validates the JSON document in FILE (or
stdin) against the JSON Schema SCHEMA (draft 2020-12), after checking the
schema itself. Exit 0 valid; 1 invalid, with the reason; 77 when the
python has no jsonschema (Debian: python3-jsonschema)."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("no jsonschema module (apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(77)

with open(sys.argv[1]) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
src = open(sys.argv[2]) if len(sys.argv) > 2 else sys.stdin
try:
    doc = json.load(src)
except ValueError as e:
    print("not JSON: %s" % e, file=sys.stderr)
    sys.exit(1)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
for e in errors[:5]:
    print("invalid at /%s: %s" % ("/".join(map(str, e.absolute_path)), e.message),
          file=sys.stderr)
sys.exit(1 if errors else 0)
