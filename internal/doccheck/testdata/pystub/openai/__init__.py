"""A stand-in for the openai package, for running the docs' Python snippets offline.

PyPI is out of reach where the tests run, so this speaks the wire itself (urllib, SSE) and
hands back what the real SDK's objects offer to the attributes the snippets read:
chunk.choices (a list, empty on the final usage chunk of a stream with include_usage),
choices[i].delta.content / .message.content (None when absent), usage. Anything the stand-in
does not implement raises, so a snippet cannot pass by calling what it lacks.
"""

import json
import urllib.request
from types import SimpleNamespace

__all__ = ["OpenAI"]


def _ns(v):
    if isinstance(v, dict):
        return _Obj(**{k: _ns(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_ns(x) for x in v]
    return v


class _Obj(SimpleNamespace):
    # Like the SDK's models: a field the server left out reads as None.
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


class _Completions:
    def __init__(self, client):
        self._client = client

    def create(self, *, model, messages, stream=False, **params):
        body = dict(params, model=model, messages=messages, stream=stream)
        req = urllib.request.Request(
            self._client.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer " + self._client.api_key},
        )
        resp = urllib.request.urlopen(req, timeout=30)
        if not stream:
            return _ns(json.load(resp))
        return self._events(resp)

    @staticmethod
    def _events(resp):
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[len("data:"):].strip()
            if data == "[DONE]":
                return
            event = json.loads(data)
            if "error" in event:
                raise RuntimeError(event["error"])
            yield _ns(event)


class OpenAI:
    def __init__(self, *, base_url, api_key):
        self.base_url, self.api_key = base_url, api_key
        self.chat = SimpleNamespace(completions=_Completions(self))
