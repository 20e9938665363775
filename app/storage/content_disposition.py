"""The Content-Disposition a download carries, whoever sends the bytes (this process or S3)."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

from werkzeug.http import dump_options_header


def attachment_disposition(file_name: str) -> str:
    """`attachment` under `file_name`: as filename= when it is ASCII, and also as RFC 5987
    filename*= (with an ASCII approximation in filename=) when it is not.

    The name is quoted as a header parameter, so no character of it can end the header or add
    another (the same rule Werkzeug's send_file follows).
    """
    try:
        file_name.encode("ascii")
    except UnicodeEncodeError:
        simple = unicodedata.normalize("NFKD", file_name).encode("ascii", "ignore").decode("ascii")
        # RFC 5987 attr-char stays as it is; everything else is percent-encoded UTF-8.
        names = {"filename": simple, "filename*": f"UTF-8''{quote(file_name, safe='!#$&+-.^_`|~')}"}
    else:
        names = {"filename": file_name}
    return dump_options_header("attachment", names)
