"""Export files: a file's lifecycle (one guarded UPDATE per transition, fenced by its attempt), the
warnings a file counts, and the formula guard every CSV and XLSX cell passes."""
