# doxygen-filter.awk - Doxygen's INPUT_FILTER for the public headers,
# which are commented in plain C: a comment at the start of a line
# documents what follows it, a comment after a member's ';' or ','
# documents that member, and a comment directly followed by several
# declarations documents each of them (a member group, whose doc
# DISTRIBUTE_GROUP_DOC hands to every member).  Section markers
# ("/* -- name -- */") and the licence stay plain.  The line count is
# kept, so Doxygen's warnings point at the header's own lines.
{ line[NR] = $0 }
END {
	for (i = 1; i <= NR; i++) {
		if ((line[i] ~ /^[ \t]*\/\*[^*]/ || line[i] ~ /^[ \t]*\/\*$/) &&
		    line[i] !~ /^[ \t]*\/\* --/)
			sub(/\/\*/, "/**", line[i])
		else if (line[i] ~ /[;,][ \t]*\/\*[^*<]/)
			sub(/\/\*/, "/**<", line[i])
	}
	for (i = 1; i <= NR; i++) {
		if (line[i] !~ /^\/\*\*[^<]/)
			continue
		for (j = i; j <= NR && line[j] !~ /\*\//; j++)
			;
		decls = 0
		for (k = j + 1; k <= NR && line[k] !~ /^[ \t]*$/ &&
		     line[k] !~ /^(\/\*|#)/; k++)
			if (line[k] ~ /^TG_API / || line[k] ~ /^TG_[A-Z_]*\(TG_DECLARE/)
				decls += line[k] ~ /^TG_API / ? 1 : 2
		if (decls >= 2) {
			line[i] = "/**@{*/ " line[i]
			line[k - 1] = line[k - 1] " /**@}*/"
		}
		i = j
	}
	# the header's first comment documents the file (its man page's
	# NAME line is the first sentence)
	if (line[1] ~ /^\/\*\*$/)
		line[1] = "/** @file"
	else
		line[1] = "/** @file */ " line[1]
	for (i = 1; i <= NR; i++)
		print line[i]
}
