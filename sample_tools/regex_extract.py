# ---
# name: regex_extract
# version: 1.0.0
# description: Extract every match of a regular expression from a text.
# inputs:
#   - name: text
#     type: string
#     description: The text to search.
#     tainted_ok: true
#   - name: pattern
#     type: string
#     description: A Python regular expression, e.g. "[\w.+-]+@[\w-]+\.[\w.]+" for email addresses.
#   - name: group
#     type: integer
#     description: The capture group to return for each match (0 is the whole match).
#     required: false
#     default: 0
#   - name: ignore_case
#     type: boolean
#     description: Whether to match letters regardless of case.
#     required: false
#     default: false
#   - name: unique
#     type: boolean
#     description: Whether to drop repeated matches, keeping the first of each.
#     required: false
#     default: false
# outputs:
#   type: array
#   items: string
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# ---
import json
import re
import sys


def main(
    text: str, pattern: str, group: int = 0, ignore_case: bool = False, unique: bool = False
) -> list[str]:
    regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    if group > regex.groups:
        raise ValueError(f"the pattern has {regex.groups} group(s); group {group} does not exist")
    found = [m.group(group) or "" for m in regex.finditer(text)]
    if unique:
        found = list(dict.fromkeys(found))
    return found


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
