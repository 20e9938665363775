"""The load suite's simulated people, driven by Locust as a library, in a process of their own.

`python -m bench.load_users SETUP_JSON` (bench/load.py starts it against the web app it started).
Locust runs every person as a gevent greenlet with a `requests` session of its own (its own
cookies, so its own sign-in) and patches the standard library for gevent on import, which is why
it runs here and not in run_all's process, which holds the app and its database connections.

Each person signs in through the login page (the CSRF token read from the page), then, with a
pause of THINK_SECONDS between actions as a person reads, picks one action by weight: a list
(files, schedules, workspace-export packages, saved queries, reports, the overview), often
followed by a click on a row of it (a file's, a schedule's, a package's page), or a small file:
the saved query's page (and its preview fragment, which the page loads on its own), the request
form posted with the CSRF and request tokens read from that form, the file's page it redirects
to, its progress fragment asked at the interval the fragment itself sets (as htmx does), and the
page again once the fragment says the file settled (HX-Refresh).

Two phases, each with its own Locust environment: the anchor (one person, no pause, so the same
pages one after another) and the load (USERS people). Each phase starts measuring once every
person has signed in and WARMUP seconds passed, measures for its seconds, then stops its people.

Prints one JSON object on stdout: per phase the requests seen ([kind, name, milliseconds,
error or null]), the errors raised inside an action, the files requested ({"id", "sent_at"
(Unix time), "seen_ms" (until the fragment said "succeeded") or null}), the CPU seconds each
role of the server's processes (web, workers, scheduler) used while it measured, and its window
(Unix times).
"""

from gevent import monkey

monkey.patch_all()

# Imported after patching, as Locust itself does.
import itertools  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
from locust import HttpUser, between, constant, task  # noqa: E402
from locust.env import Environment  # noqa: E402

from bench.process_usage import cpu_seconds  # noqa: E402

# Seconds a person pauses between actions (reading the page), drawn evenly from this range.
THINK_SECONDS = (1.0, 4.0)
SIGN_IN_SECONDS = 120
# A person stops watching a file whose fragment has not said it settled by then.
FILE_SECONDS = 120

CSRF_HEADER = re.compile(r'"X-CSRFToken": "([^"]+)"')
FORM_FIELD = re.compile(r'name="(csrf_token|request_token)" value="([^"]*)"')
CHECKED_TIME_STAMPS = re.compile(r'name="time_stamps" value="([^"]+)" checked')
PROGRESS_URL = re.compile(r'hx-get="(/w/\d+/files/\d+/progress[^"]*)"')
POLL_EVERY = re.compile(r'hx-trigger="every (\d+)(ms|s)"')


class Recorder:
    """What one phase saw while it measured."""

    def __init__(self, server_pids: dict[str, list[int]]) -> None:
        self.measuring = False
        self.requests: list[list] = []
        self.action_errors: list[str] = []
        self.files: list[dict] = []
        self._server_pids = server_pids
        self._cpu_at_start: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}
        self.window: list[float] = []

    def start(self) -> None:
        self._cpu_at_start = {role: cpu_seconds(pids) for role, pids in self._server_pids.items()}
        self.window = [time.time()]
        self.measuring = True

    def stop(self) -> None:
        self.measuring = False
        self.window.append(time.time())
        self.cpu_seconds = {
            role: round(cpu_seconds(pids) - self._cpu_at_start[role], 2) for role, pids in self._server_pids.items()
        }

    def on_request(self, request_type, name, response_time, response_length, exception=None, **_) -> None:
        if self.measuring:
            error = None if exception is None else f"{name}: {exception}"[:300]
            self.requests.append([name.split(" ", 1)[0], name, round(response_time, 1), error])

    def on_user_error(self, user_instance, exception, tb, **_) -> None:
        if self.measuring:
            self.action_errors.append(f"{type(exception).__name__}: {exception}"[:300])

    def result(self) -> dict:
        return {
            "requests": self.requests,
            "action_errors": self.action_errors,
            "files": self.files,
            "cpu_seconds": self.cpu_seconds,
            "window": self.window,
        }


class Person(HttpUser):
    """One person at the console. The phase sets the class's setup, recorder and sign-ins."""

    setup: dict = {}
    recorder = Recorder({})
    emails: itertools.cycle = itertools.cycle([""])
    signed_in = 0
    wait_time = between(*THINK_SECONDS)

    def on_start(self) -> None:
        self.workspace = f"/w/{self.setup['workspace_id']}"
        login = self._page("page sign-in", "/login")
        token = CSRF_HEADER.search(login).group(1)
        with self.client.post(
            "/login",
            data={"email": next(Person.emails), "password": self.setup["password"], "csrf_token": token},
            name="form sign-in",
            allow_redirects=False,
            catch_response=True,
        ) as answer:
            if answer.status_code != 302:
                answer.failure(f"signing in: {_refusal(answer)}")
                raise RuntimeError(f"signing in: {_refusal(answer)}")
            answer.success()
        Person.signed_in += 1

    def _page(self, name: str, path: str, fragment: bool = False) -> str:
        """GET a page (or an htmx fragment); anything but 200 is an error."""
        headers = {"HX-Request": "true"} if fragment else None
        with self.client.get(path, name=name, headers=headers, allow_redirects=False, catch_response=True) as answer:
            if answer.status_code != 200:
                answer.failure(_refusal(answer))
            else:
                answer.success()
            return answer.text

    def _click_a_row(self, listing: str, pattern: str, name: str) -> None:
        """Open one of the rows' pages the list links to, as a person picks one."""
        links = sorted(set(re.findall(pattern, listing)))
        if links:
            self._page(name, random.choice(links))

    @task(3)
    def files(self) -> None:
        listing = self._page("page files list", f"{self.workspace}/files/")
        self._click_a_row(listing, rf'href="({self.workspace}/files/\d+)"', "page file")

    @task(2)
    def schedules(self) -> None:
        listing = self._page("page schedules list", f"{self.workspace}/schedules/")
        self._click_a_row(listing, rf'href="({self.workspace}/schedules/\d+)"', "page schedule")

    @task(2)
    def packages(self) -> None:
        listing = self._page("page packages list", f"{self.workspace}/export/packages/")
        self._click_a_row(listing, rf'href="({self.workspace}/export/packages/\d+)"', "page package")

    @task(1)
    def queries(self) -> None:
        self._page("page queries list", f"{self.workspace}/queries/")

    @task(1)
    def reports(self) -> None:
        self._page("page reports list", f"{self.workspace}/reports/")

    @task(1)
    def overview(self) -> None:
        self._page("page overview", f"{self.workspace}/")

    @task(2)
    def small_file(self) -> None:
        query = f"{self.workspace}/queries/{self.setup['query_id']}"
        page = self._page("page query", query)
        self._page("fragment query preview", f"{query}/preview", fragment=True)
        form = dict(FORM_FIELD.findall(page))
        checked = CHECKED_TIME_STAMPS.search(page)
        sent_at = time.time()
        started = time.perf_counter()
        with self.client.post(
            f"{query}/files",
            data={
                **form,
                "format": "csv",
                "heading": "names",
                "time_stamps": checked.group(1) if checked else "",
            },
            name="form request file",
            allow_redirects=False,
            catch_response=True,
        ) as answer:
            if answer.status_code != 302:
                answer.failure(f"the file request: {_refusal(answer)}")
                return
            answer.success()
            file_path = answer.headers["Location"]
        record = {"id": int(file_path.rstrip("/").rsplit("/", 1)[1]), "sent_at": sent_at, "seen_ms": None}
        if self.recorder.measuring:
            self.recorder.files.append(record)
        self._watch_file(file_path, record, started)

    def _watch_file(self, file_path: str, record: dict, started: float) -> None:
        """The file's page, its progress asked as the page's htmx asks it, the page again once settled."""
        fragment = self._page("page file", file_path)
        progress = PROGRESS_URL.search(fragment)
        deadline = time.monotonic() + FILE_SECONDS
        while progress:
            gevent.sleep(_poll_seconds(fragment))
            with self.client.get(
                progress.group(1).replace("&amp;", "&"),
                name="fragment file progress",
                headers={"HX-Request": "true"},
                allow_redirects=False,
                catch_response=True,
            ) as answer:
                if answer.status_code not in (200, 286):
                    answer.failure(_refusal(answer))
                    return
                answer.success()
                # How the file ended is read from the database afterwards (bench/load.py), once.
                if answer.status_code == 286:
                    if "succeeded" in answer.text:
                        record["seen_ms"] = round((time.perf_counter() - started) * 1000, 1)
                    break
                if time.monotonic() > deadline:
                    return
                fragment = answer.text
        self._page("page file", file_path)


def _refusal(answer) -> str:
    """What went wrong with a request: its status, or the exception when no answer came (status 0)."""
    if answer.status_code == 0:
        return f"no answer: {answer.error}"
    return f"answered {answer.status_code}"


def _poll_seconds(fragment: str) -> float:
    """The interval the fragment's hx-trigger asks for (htmx's `every 500ms` or `every 2s`)."""
    found = POLL_EVERY.search(fragment)
    if not found:
        return 2.0
    amount = int(found.group(1))
    return amount / 1000 if found.group(2) == "ms" else float(amount)


def run_phase(setup: dict, users: int, seconds: float, warmup: float, think) -> dict:
    """`users` people for `warmup` + `seconds` seconds; what they did in the last `seconds`."""
    recorder = Recorder(setup["server_pids"])
    Person.setup = setup
    Person.recorder = recorder
    Person.emails = itertools.cycle(setup["emails"][:users])
    Person.signed_in = 0
    Person.wait_time = think
    environment = Environment(user_classes=[Person], host=setup["base"])
    environment.events.request.add_listener(recorder.on_request)
    environment.events.user_error.add_listener(recorder.on_user_error)
    runner = environment.create_local_runner()
    runner.start(users, spawn_rate=users)
    deadline = time.monotonic() + SIGN_IN_SECONDS
    while Person.signed_in < users:
        if time.monotonic() > deadline:
            runner.quit()
            raise SystemExit(f"only {Person.signed_in} of {users} people signed in within {SIGN_IN_SECONDS} s")
        gevent.sleep(0.1)
    gevent.sleep(warmup)
    recorder.start()
    gevent.sleep(seconds)
    recorder.stop()
    runner.quit()
    return recorder.result()


def main() -> None:
    setup = json.loads(sys.argv[1])
    anchor = run_phase(setup, 1, setup["anchor_seconds"], setup["warmup_seconds"], constant(0))
    load = run_phase(setup, setup["users"], setup["seconds"], setup["warmup_seconds"], between(*THINK_SECONDS))
    print(json.dumps({"anchor": anchor, "load": load}), flush=True)


if __name__ == "__main__":
    main()
