# ---
# name: word_count
# version: 1.0.0
# description: Count the words, lines and characters in a text.
# inputs:
#   - name: text
#     type: string
#     description: The text to count.
#     tainted_ok: true
# outputs:
#   type: object
#   description: '{words, lines, characters, unique_words}'
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

WORD_RE = re.compile(r"\w+(?:['’-]\w+)*")


def main(text: str) -> dict:
    """Counts words the way people do: "don't" and "well-known" are one word each."""
    words = WORD_RE.findall(text)
    return {
        "words": len(words),
        "lines": len(text.splitlines()),
        "characters": len(text),
        "unique_words": len({w.lower() for w in words}),
    }


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
