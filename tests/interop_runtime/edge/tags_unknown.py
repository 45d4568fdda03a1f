# ---
# name: edge_tool
# version: 1.0.0
# description: An edge case for the runtime.
# inputs:
#   - name: text
#     type: string
#     description: The text.
# outputs:
#   type: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: "3.12"
#   packages: []
# generated_at: !!timestamp 2024-01-01T00:00:00Z
# ---

import json
import sys


def main(text: str) -> dict:
    return {"text": text}


if __name__ == "__main__":
    print(json.dumps(main(**json.loads(sys.stdin.read()))))

