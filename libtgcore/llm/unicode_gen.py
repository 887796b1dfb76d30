#!/usr/bin/env python3
"""Writes unicode_tab.c: the code point ranges that the pre-tokenizers'
patterns call \\p{L} (letters: Lu Ll Lt Lm Lo) and \\p{N} (numbers: Nd Nl
No), from Python's unicodedata.  Run it from this folder when Python's
Unicode version moves on:  python3 unicode_gen.py > unicode_tab.c"""
import sys
import unicodedata


def cls(c):
    cat = unicodedata.category(chr(c))
    if cat[0] == "L":
        return 1
    if cat[0] == "N":
        return 2
    return 0


def ranges():
    out, start, cur = [], 0, cls(0)
    for c in range(1, 0x110000):
        k = cls(c)
        if k != cur:
            if cur:
                out.append((start, c - 1, cur))
            start, cur = c, k
    if cur:
        out.append((start, 0x10FFFF, cur))
    return out


def main():
    rs = ranges()
    w = sys.stdout.write
    w("/*\n * unicode_tab.c - letters (\\p{L}) and numbers (\\p{N}) as sorted\n"
      " * code point ranges, made by unicode_gen.py from Python's unicodedata\n"
      " * (Unicode %s).  Generated: do not edit.\n */\n"
      % unicodedata.unidata_version)
    w('#include "llm.h"\n\n')
    w("const tok_urange tok_uranges[] = {\n")
    for i in range(0, len(rs), 3):
        w("\t" + " ".join("{0x%X, 0x%X, %d}," % r for r in rs[i:i + 3]) + "\n")
    w("};\n\nconst size_t tok_nuranges = sizeof tok_uranges / sizeof tok_uranges[0];\n")


main()
