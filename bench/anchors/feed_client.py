"""The anchors' model: the bench's paced OpenAI-compatible stream (bench/feed.py), read with
httpx as navtui's openai backend reads it, one content fragment at a time."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx


def fragments(base_url: str) -> Iterator[str]:
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    with httpx.Client(timeout=None) as client, client.stream(
        "POST", base_url + "/chat/completions", json=body
    ) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices", []):
                text = choice.get("delta", {}).get("content")
                if text:
                    yield text
