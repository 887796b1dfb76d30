#!/usr/bin/env python3
"""The references of tests/test_llm_chat.c: chat templates rendered with
jinja2 as transformers' apply_chat_template renders them (a sandboxed
environment with trim_blocks, lstrip_blocks and loop controls; the
messages as dicts; bos_token and eos_token the file's), for a set of
conversations, with and without the generation prompt.

The templates: SmolLM2's own, read from the model file, and GGUF files
of no tensors written here: Llama 3's (Meta-Llama-3-8B-Instruct's
template text), Qwen 2's ChatML (another default system message), a
ChatML of no default, a ChatML whose literals use Jinja's escapes,
Llama 3.1's and 3.2's (their system header with the knowledge date and
the default date_string: rendered without strftime_now), and,
for the plain fallback, a Mistral-style template and no template at
all, where the reference is the plain "role: content" lines.  Also the
files tg_llm_chat_from_gguf must refuse (bad-*.gguf).

Writes OUT/chat.ref: per case
    case FILE AGP NMSG\\n
    role LEN\\n + LEN bytes + \\n      (NMSG times, each with ...)
    content LEN\\n + LEN bytes + \\n
    text LEN\\n + LEN bytes + \\n      (the rendered prompt)
    ids N a b ...\\n                  (SmolLM2: the prompt's ids from
                                     `tokenizers`, special tokens parsed;
                                     N is -1 for the other files)
Usage: chat_ref.py MODEL.gguf OUT"""
import json
import os
import sys

import jinja2
import jinja2.ext
import jinja2.sandbox

sys.dont_write_bytecode = True  # the source tree may be read-only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_vocab  # noqa: E402

LLAMA3 = ("{% set loop_messages = messages %}{% for message in loop_messages %}"
          "{% set content = '<|start_header_id|>' + message['role'] + "
          "'<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}"
          "{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
          "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
          "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")
# Llama 3.1's (Meta-Llama-3.1-8B-Instruct) and 3.2's templates; the
# tests render them without strftime_now, so 3.2's date is its default
LLAMA31 = r"""{{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message + builtin tools #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if builtin_tools is defined or tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{%- if builtin_tools is defined %}
    {{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\n\n"}}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {#- Extract the first user message so we can plug it in here #}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {%- if builtin_tools is defined and tool_call.name in builtin_tools %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- "<|python_tag|>" + tool_call.name + ".call(" }}
            {%- for arg_name, arg_val in tool_call.arguments | items %}
                {{- arg_name + '="' + arg_val + '"' }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- endif %}
                {%- endfor %}
            {{- ")" }}
        {%- else  %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- '{"name": "' + tool_call.name + '", ' }}
            {{- '"parameters": ' }}
            {{- tool_call.arguments | tojson }}
            {{- "}" }}
        {%- endif %}
        {%- if builtin_tools is defined %}
            {#- This means we're in ipython mode #}
            {{- "<|eom_id|>" }}
        {%- else %}
            {{- "<|eot_id|>" }}
        {%- endif %}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
"""
LLAMA32 = LLAMA31.replace(
    '{%- set date_string = "26 Jul 2024" %}',
    '{%- if strftime_now is defined %}\n'
    '        {%- set date_string = strftime_now("%d %b %Y") %}\n'
    '    {%- else %}\n'
    '        {%- set date_string = "26 Jul 2024" %}\n'
    '    {%- endif %}')
QWEN2 = ("{% for message in messages %}{% if loop.first and messages[0]['role']"
         " != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant."
         "<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n'"
         " + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
         "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
         "{% endif %}")
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + "
          "'\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
          "{% endif %}")
# Jinja's escapes in the literals, and a system literal that is not a
# default (its content comes from the message) before the default one
ESCAPED = ("{%- if messages[0]['role'] == 'system' %}"
           "{{- '<|im_start|>system\\n' + messages[0]['content'] + "
           "'<|im_end|>\\n' }}{%- else %}"
           "{{- \"<|im_start|>system\\nYou're \\\"careful\\\",\\tbrief."
           "<|im_end|>\\n\" }}{%- endif %}"
           "{%- for message in messages %}{%- if not (loop.first and "
           "message['role'] == 'system') %}{{- '<|im_start|>' + "
           "message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
           "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}"
           "{{- '<|im_start|>assistant\\n' }}{%- endif %}")
MISTRAL = ("{{ bos_token }}{% for message in messages %}{% if message['role'] "
           "== 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
           "{% elif message['role'] == 'assistant' %}{{ message['content'] + "
           "eos_token }}{% endif %}{% endfor %}")

CONVERSATIONS = [
    [("user", "Hello!")],
    [("system", "You are terse."), ("user", "Hi")],
    [("user", "What is 2+2?"), ("assistant", "4"), ("user", "And 3+3?")],
    [("system", "Sys"), ("user", "héllo wörld 你好 😀 ✨"),
     ("assistant", "  padded answer \n\t"), ("user", "")],
    [("assistant", "I start.")],
    [("user", "\u3000 ideographic\u2028 \x1c\x85\xa0")],
    [("user", "call it"), ("tool", "{\"x\": 1}")],
    [("user", "<|im_start|>inject<|eot_id|>")],
    [("system", "")],
    [("user", " \n\t ")],
    [("system", "  Be brief.\n"), ("user", "weather?"),
     ("ipython", "{\"t\": \"15\u00b0C\"}\n\\ \x01 é \x7f")],
]

# the first tokens: "<|begin_of_text|>" is the BOS of the Llama files
TOKENS = ["<unk>", "<|begin_of_text|>", "<|eot_id|>"]


def write_gguf(path, template, bos=1, tokens=TOKENS):
    import gguf
    w = gguf.GGUFWriter(path, "llama")
    if tokens is not None:
        w.add_tokenizer_model("gpt2")
        w.add_token_list(tokens)
        w.add_bos_token_id(bos)
        w.add_eos_token_id(2)
    if isinstance(template, str):
        w.add_chat_template(template)
    elif template is not None:
        w.add_uint32("tokenizer.chat_template", template)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def render(template, msgs, agp, bos, eos):
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[jinja2.ext.loopcontrols])
    # transformers' own tojson: json.dumps, non-ASCII kept
    env.filters["tojson"] = lambda x, indent=None: json.dumps(
        x, ensure_ascii=False, indent=indent)
    return env.from_string(template).render(
        messages=[{"role": r, "content": c} for r, c in msgs],
        add_generation_prompt=agp, bos_token=bos, eos_token=eos)


def plain(msgs, agp):
    return "".join(r + ": " + c + "\n" for r, c in msgs) + (
        "assistant: " if agp else "")


def smollm_tokenizer(v):
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    vocab = {t.decode(): i for i, t in enumerate(v["tokens"])}
    merges = [tuple(m.decode().split(" ", 1)) for m in v["merges"]]
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    for t, ty in zip(v["tokens"], v["types"]):
        if ty in (3, 4):
            a = AddedToken(t.decode(), special=ty == 3, normalized=False)
            tok.add_tokens([a]) if ty == 4 else tok.add_special_tokens([a])
    return tok


def field(f, name, b):
    f.write(b"%s %d\n" % (name, len(b)) + b + b"\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    v = dump_vocab.read_gguf(sys.argv[1])
    import gguf
    r = gguf.GGUFReader(sys.argv[1])
    smol = r.fields["tokenizer.chat_template"].contents()
    tok = smollm_tokenizer(v)
    files = {"smollm": (smol, v["tokens"][v["bos"]].decode(),
                        v["tokens"][v["eos"]].decode())}
    for name, tmpl in (("llama3", LLAMA3), ("llama31", LLAMA31),
                       ("llama32", LLAMA32), ("qwen2", QWEN2),
                       ("chatml", CHATML), ("escaped", ESCAPED),
                       ("mistral", MISTRAL), ("none", None)):
        write_gguf(os.path.join(out, name + ".gguf"), tmpl)
        files[name] = (tmpl, TOKENS[1], TOKENS[2])
    write_gguf(os.path.join(out, "nobos.gguf"), LLAMA3, tokens=None)
    files["nobos"] = (LLAMA3, "", "")
    write_gguf(os.path.join(out, "bad-type.gguf"), 7)
    write_gguf(os.path.join(out, "bad-bos.gguf"), LLAMA3, bos=999)
    with open(os.path.join(out, "chat.ref"), "wb") as f:
        for name, (tmpl, bos, eos) in files.items():
            for msgs in CONVERSATIONS:
                for agp in (False, True):
                    known = tmpl and ("<|im_start|>" in tmpl or
                                      "<|start_header_id|>" in tmpl)
                    text = (render(tmpl, msgs, agp, bos, eos) if known
                            else plain(msgs, agp))
                    f.write(b"case %s %d %d\n" % (name.encode(), agp,
                                                  len(msgs)))
                    for role, content in msgs:
                        field(f, b"role", role.encode())
                        field(f, b"content", content.encode())
                    field(f, b"text", text.encode())
                    ids = (tok.encode(text, add_special_tokens=False).ids
                           if name == "smollm" else None)
                    f.write(b"ids -1\n" if ids is None else
                            b"ids %d%s\n" % (len(ids), b"".join(
                                b" %d" % i for i in ids)))


main()
