#!/usr/bin/env python3
"""Writes chat_golden.json: conversations rendered by ChatTemplate (read
from the Go source) with Jinja2 configured as Hugging Face transformers
configures it for apply_chat_template (sandboxed, trim_blocks,
lstrip_blocks). TestChatTemplateGolden checks that RenderChat/RenderPrompt
decode to the same text. Run by hand: python3 gen_chat_golden.py > chat_golden.json
"""
import json
import re
import sys

from jinja2.sandbox import ImmutableSandboxedEnvironment

src = open("../hfconfig.go", encoding="utf-8").read()
body = src.split("const ChatTemplate =", 1)[1].split("\n\n", 1)[0]
template = "".join(json.loads(s) for s in re.findall(r'"(?:[^"\\]|\\.)*"', body))

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
tmpl = env.from_string(template)

convs = [
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
     {"role": "assistant", "content": "4"}, {"role": "user", "content": "thanks", "done": True}],
    [{"role": "user", "content": "multi\nline  text <|end|> literal"}],
    [{"role": "user", "content": ""}, {"role": "assistant", "content": "héllo 🙂"}],
]
cases = []
for c in convs:
    cases.append({"messages": c, "text": tmpl.render(messages=c, add_generation_prompt=False)})
    cases.append({"messages": c, "next": "assistant", "text": tmpl.render(messages=c, add_generation_prompt=True)})
    cases.append({"messages": c, "next": "user",
                  "text": tmpl.render(messages=c, add_generation_prompt=True, generation_role="user")})
json.dump(cases, sys.stdout, ensure_ascii=True, indent=1)
