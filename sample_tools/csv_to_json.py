# ---
# name: csv_to_json
# version: 1.0.0
# description: Convert CSV text with a header row into a list of JSON objects.
# inputs:
#   - name: csv_text
#     type: string
#     description: The CSV content, first row naming the columns.
#     tainted_ok: true
#   - name: delimiter
#     type: string
#     description: The character between fields; empty means detect it from the text.
#     required: false
#     default: ''
#   - name: numbers
#     type: boolean
#     description: Whether to turn fields that look like numbers into numbers.
#     required: false
#     default: true
# outputs:
#   type: array
#   items: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# generated_by: claude-opus-4-7
# generated_at: 2026-05-04T12:34:56Z
# ---
import csv
import io
import json
import re
import sys

NUMBER_RE = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$")


def convert(value: str, numbers: bool) -> object:
    if numbers and NUMBER_RE.match(value):
        return float(value) if any(c in value for c in ".eE") else int(value)
    return value


def main(csv_text: str, delimiter: str = "", numbers: bool = True) -> list[dict]:
    if not delimiter:
        try:
            delimiter = csv.Sniffer().sniff(csv_text[:4096], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    reader = csv.DictReader(io.StringIO(csv_text), delimiter=delimiter)
    return [
        {key: convert(value or "", numbers) for key, value in row.items() if key is not None}
        for row in reader
    ]


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
