# Issues 9 and 11: a tracker reference in a shell comment.
echo "#3 is not a comment"  # nor ../shared/notes.md
# tpuemu plan --nope in.csv; docs/sharding.md, "Execution" is no section.
