"""What the people who run the product see of it: JSON logs with request and job ids, and metrics."""
