# ---
# name: slack_send_message
# version: 1.0.0
# description: Post a message to a Slack channel as the connected user.
# inputs:
#   - name: channel
#     type: string
#     description: The channel name or ID, e.g. "#general" or "C0123456789".
#   - name: text
#     type: string
#     description: The message to post, in Slack's mrkdwn format.
#     tainted_ok: true
#   - name: thread_ts
#     type: string
#     description: The timestamp of a message to reply to in its thread; empty posts to the channel.
#     required: false
#     default: ''
# outputs:
#   type: object
#   description: '{ok, channel, ts} from Slack, or {ok: false, error}.'
# capabilities:
#   network: true
#   filesystem: none
#   human_confirm: true
# runtime:
#   language: python
#   python_version: '3.12'
#   packages: []
# external_auth:
#   - slack.send_message
# ---
import json
import os
import sys
import urllib.error
import urllib.request

API_URL = "https://slack.com/api/chat.postMessage"


def main(channel: str, text: str, thread_ts: str = "") -> dict:
    # The runtime mints a short-lived token for the declared scope just before the call.
    token = os.environ.get("PATCH_ACCESS_TOKEN", "")
    if not token:
        return {
            "ok": False,
            "error": "PATCH_ACCESS_TOKEN is not set: call the tool through the Patch "
            "runtime, which mints one for its external_auth (slack.chat:write), or start "
            "patch-tui with PATCH_ACCESS_TOKEN set to a Slack token that has chat:write",
        }
    payload: dict = {"channel": channel, "text": text}
    if thread_ts:
        payload["thread_ts"] = thread_ts
    request = urllib.request.Request(
        API_URL,
        data=json.dumps(payload).encode("utf-8"),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json; charset=utf-8",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:  # Slack answers 429 with Retry-After when rate limited
        return {
            "ok": False,
            "error": f"http_{exc.code}",
            "retry_after": exc.headers.get("Retry-After"),
        }
    if not answer.get("ok"):
        return {"ok": False, "error": answer.get("error", "unknown_error")}
    return {"ok": True, "channel": answer.get("channel"), "ts": answer.get("ts")}


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
