# ---
# name: fetch_url_title
# version: 1.0.0
# description: Fetch a web page and return its title, final URL and HTTP status.
# inputs:
#   - name: url
#     type: string
#     description: The http or https address of the page.
#     tainted_ok: true
#   - name: timeout
#     type: number
#     description: Seconds to wait for the server before giving up.
#     required: false
#     default: 10
# outputs:
#   type: object
#   description: '{url, status, title}; title is empty when the page has none.'
# capabilities:
#   network: true
#   filesystem: none
#   human_confirm: false
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# ---
import json
import sys
import urllib.parse
import urllib.request
from html.parser import HTMLParser

MAX_BYTES = 1_000_000  # a title sits in the first kilobytes; never read a whole video


class TitleParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.in_title = False
        self.parts: list[str] = []
        self.done = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "title" and not self.done:
            self.in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title:
            self.in_title = False
            self.done = True

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.parts.append(data)


def main(url: str, timeout: float = 10) -> dict:
    # Only web addresses: file:// or ftp:// would turn a page fetcher into a file reader.
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ValueError("url must start with http:// or https://")
    request = urllib.request.Request(url, headers={"User-Agent": "patch-tool/1.0"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        charset = response.headers.get_content_charset() or "utf-8"
        html = response.read(MAX_BYTES).decode(charset, "replace")
        parser = TitleParser()
        parser.feed(html)
        title = " ".join("".join(parser.parts).split())
        return {"url": response.geturl(), "status": response.status, "title": title}


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
