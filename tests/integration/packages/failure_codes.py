"""The specification of whose failure each execution failure code is (issue 26, item 1)."""

# Whose failure each code is (issue 26, item 1): everything inside Rhythm is ours; what the
# customer's settings cause, and a change of them cures, is theirs.
FAILED_ON_OUR_SIDE = [
    "stalled",
    "stopped_by_staff",
    "storage_error",
    "storage_full",
    "snapshot_failed",
    "timeout",
    "coverage_out_of_date",
    "internal",
]
FAILED_BY_THE_SETTINGS = ["dataset_not_covered", "volume_too_small"]
