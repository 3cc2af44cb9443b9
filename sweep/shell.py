"""Shell words as bash writes them: a dry run's command lines and the SLURM script quote each word as bash's
`printf %q` does, so that they read as bash's own."""

# bash's `printf %q` escapes these anywhere, `~` at a word's start or after = or :, `#` at a word's start
SHELL_SPECIAL = set(" \t\n'\"\\|&;()<>!{}*[?]^$`,")


def shell_quote(word: str) -> str:
    """`word` quoted as bash's `printf %q` quotes it (its dry-run lines are compared with recorded ones)."""
    if not word:
        return "''"
    if not word.isprintable():
        escaped = word.encode("unicode_escape").decode().replace("'", "\\'")
        return f"$'{escaped}'"
    return "".join("\\" + c if c in SHELL_SPECIAL or (c == "~" and (i == 0 or word[i - 1] in "=:"))
                   or (c == "#" and i == 0) else c for i, c in enumerate(word))


def shell_line(words) -> str:
    return " ".join(map(shell_quote, words))
