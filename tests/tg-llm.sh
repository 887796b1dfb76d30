#!/bin/sh
# tg-llm on SmolLM2-135M (TG_DEPS_DIR; skips without it, fails when
# TG_TEST_REQUIRE_DEPS is set): greedy completion gives the text of the
# independent numpy reference (tests/llm/ref_forward.py --greedy), the
# same seed gives the same sampled text, a chat answers two turns, and a
# missing file, a file that is not GGUF, bad arguments, a full context
# and Ctrl-C end with their messages and exit statuses.
set -u
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out" "$err"; exit 1; }
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err" "$out".*' EXIT
llm="$TG_TOOLS/tg-llm"
model="${TG_DEPS_DIR:-/nonexistent}/models/SmolLM2-135M-Instruct.Q4_1.gguf"
py="${TG_DEPS_DIR:-/nonexistent}/venv/bin/python"
if [ ! -r "$model" ] || [ ! -x "$py" ]; then
	[ -n "${TG_TEST_REQUIRE_DEPS:-}" ] && { echo "FAIL: no $model"; exit 1; }
	echo "SKIP: no $model or $py (run deps.sh)"
	exit 77
fi

# greedy: the reference's continuation, token for token
prompt="The capital of France is"
"$py" "$TG_TEST_SRCDIR/llm/ref_forward.py" "$model" --prompt "$prompt" \
	--greedy 12 --greedy-text "$out.want" >"$err" 2>&1 || fail "ref_forward.py"
"$llm" -m "$model" -p "$prompt" --temp 0 -n 12 >"$out" 2>"$err" \
	|| fail "greedy: exit status $?"
{ printf '%s' "$prompt"; cat "$out.want"; echo; } | cmp -s - "$out" \
	|| fail "greedy text differs from the reference's: $(cat "$out.want")"
grep -q '^tg-llm: prefill 5 tokens in .* decode 11 tokens in' "$err" \
	|| fail "the timings line"

# sampling: a seed gives its text again; another seed another text
for s in 1 1b 2; do
	"$llm" -m "$model" -p "Once upon a time" --seed ${s%b} -n 24 \
		>"$out.$s" 2>"$err" || fail "seed $s: exit status $?"
done
cmp -s "$out.1" "$out.1b" || fail "seed 1 twice: different texts"
cmp -s "$out.1" "$out.2" && fail "seeds 1 and 2 gave the same text"

# a chat of two turns on standard input, the cache kept between them
printf 'What is 2+2?\nAnd 3+3?\n' | "$llm" -m "$model" --chat --temp 0 \
	-n 16 >"$out" 2>"$err" || fail "chat: exit status $?"
[ "$(grep -c '^> ' "$out")" -ge 2 ] || fail "chat: two prompts"
grep -q 'decode [1-9][0-9]* tokens' "$err" || fail "chat: timings"

# errors
"$llm" -m /nonexistent.gguf -p x >"$out" 2>"$err"
[ $? -eq 1 ] || fail "missing file: exit status"
grep -q '^tg-llm: model: gguf_open: /nonexistent.gguf' "$err" \
	|| fail "missing file: message"
"$llm" -m "$TG_TEST_SRCDIR/tg-llm.sh" -p x >"$out" 2>"$err"
[ $? -eq 1 ] || fail "not GGUF: exit status"
grep -q 'gguf_open: .*tg-llm.sh' "$err" || fail "not GGUF: message"
"$llm" -m "$model" >"$out" 2>"$err"
[ $? -eq 2 ] || fail "no prompt: exit status"
grep -q 'give either -p TEXT or --chat' "$err" || fail "no prompt: message"
"$llm" -m "$model" -p x --top-p 2 >"$out" 2>"$err"
[ $? -eq 2 ] || fail "bad --top-p: exit status"
grep -q "bad value '2' for --top-p" "$err" || fail "bad --top-p: message"
"$llm" -m "$model" -p "$prompt" -c 8 --temp 0 -n 100 >"$out" 2>"$err" \
	|| fail "full context: exit status $?"
grep -q 'the context of 8 tokens is full' "$err" || fail "full context"

# Ctrl-C stops the text, prints the timings and exits 130
"$llm" -m "$model" -p "$prompt" -n -1 -c 4096 >"$out" 2>"$err" &
pid=$!
for i in $(seq 1 600); do
	[ -s "$out" ] && [ "$(wc -c <"$out")" -gt ${#prompt} ] && break
	sleep 0.1
done
kill -INT $pid
wait $pid
[ $? -eq 130 ] || fail "Ctrl-C: exit status"
grep -q '^tg-llm: interrupted' "$err" || fail "Ctrl-C: message"
grep -q '^tg-llm: prefill' "$err" || fail "Ctrl-C: timings"
exit 0
