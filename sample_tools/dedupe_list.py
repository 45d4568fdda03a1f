# ---
# name: dedupe_list
# version: 1.0.0
# description: Remove repeated entries from a list of strings, keeping the first of each.
# inputs:
#   - name: items
#     type: array
#     description: The strings to deduplicate, in order.
#     items:
#       type: string
#   - name: case_sensitive
#     type: boolean
#     description: Whether "Apple" and "apple" count as different entries.
#     required: false
#     default: true
#   - name: strip
#     type: boolean
#     description: Whether to trim surrounding spaces before comparing and in the result.
#     required: false
#     default: true
#   - name: sort
#     type: boolean
#     description: Whether to sort the result alphabetically instead of keeping the input order.
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
import sys


def main(
    items: list[str], case_sensitive: bool = True, strip: bool = True, sort: bool = False
) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        value = item.strip() if strip else item
        key = value if case_sensitive else value.casefold()
        if key not in seen:
            seen.add(key)
            out.append(value)
    return sorted(out, key=str.casefold) if sort else out


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
