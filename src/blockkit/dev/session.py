"""One ``blockkit dev`` run: the manifest read, the surface chosen, servers up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from blockkit.dev.contract import Violation
from blockkit.dev.errors import DevError
from blockkit.dev.host_app import HostSetup, build_host_app, new_dev_key, page_url
from blockkit.emulator.http.hostcheck import HostAllowlist, OriginPolicy, check_entry
from blockkit.dev.init_payload import build_identity
from blockkit.dev.manifest import DevManifest, load_dev_manifest
from blockkit.dev.platform import DevPlatform
from blockkit.dev.protocol import THEMES
from blockkit.dev.requests_feed import RequestFeed
from blockkit.dev.scenarios import apply as apply_scenarios
from blockkit.dev.scenarios import clear as clear_scenarios
from blockkit.dev.scenarios import latency_ms as scenario_latency_ms
from blockkit.dev.scenarios import parse_scenarios
from blockkit.dev.surface import Surface, choose_surface
from blockkit.dev.timings import PLATFORM_TIMINGS, HostTimings
from blockkit.dev.trace import TraceLog

if TYPE_CHECKING:
    from blockkit.dev.servers import ServerPair

DEFAULT_TRACE_NAME = Path(".blockkit") / "dev-trace.jsonl"
BLOCK_ENTRY = "index.html"
ALLOWED_HOST_HINT = "; start blockkit dev with --allowed-host NAME to add a name"


@dataclass
class DevOptions:
    block_dir: Path
    surface: str | None = None
    proxy: str | None = None
    theme: str = "dark"
    anonymous: bool = False
    context: dict[str, str] = field(default_factory=dict)
    timings: HostTimings = PLATFORM_TIMINGS
    # None: <block dir>/.blockkit/dev-trace.jsonl
    trace_path: Path | None = None
    block_port: int = 0
    host_port: int = 0
    # Names both servers answer to besides localhost, 127.0.0.1 and [::1] (--allowed-host).
    allowed_hosts: tuple[str, ...] = ()
    on_violation: Callable[[Violation], None] | None = None
    # Told what the developer should know while the servers run (the command prints it).
    on_note: Callable[[str], None] | None = None
    # The local platform's data; None: <block dir>/.blockkit/emulator/.
    platform_dir: Path | None = None
    # Told each brokered call that failed (a cancelled dialog is none), as it happens.
    on_failed_call: Callable[[dict[str, Any]], None] | None = None
    # Unhappy paths switched on for the run (--scenario; dev/scenarios.py), checked names.
    scenarios: tuple[str, ...] = ()


@dataclass(frozen=True)
class BlockSource:
    """Where the block origin's content comes from."""

    root: Path | None
    proxy: str | None

    def describe(self) -> str:
        return f"proxied to {self.proxy}" if self.proxy else f"served from {self.root}"


def resolve_source(manifest: DevManifest, proxy: str | None) -> BlockSource:
    if proxy is not None:
        from blockkit.dev.proxy import parse_proxy_url

        parse_proxy_url(proxy)
        return BlockSource(root=None, proxy=proxy)
    block_dir = manifest.block_dir.resolve()
    if manifest.output_dir is None:
        if manifest.build_command is not None:
            raise DevError(
                f"{manifest.path}: buildCommand is set but outputDir is not; "
                "the dev host cannot tell where the build lands"
            )
        return _served_from(block_dir)
    root = (block_dir / manifest.output_dir).resolve()
    if root != block_dir and block_dir not in root.parents:
        raise DevError(f"{manifest.path}: outputDir {manifest.output_dir!r} leaves the block directory")
    if not root.is_dir():
        hint = f"run `{manifest.build_command}` first, or " if manifest.build_command else ""
        raise DevError(
            f"outputDir {manifest.output_dir!r} does not exist in {block_dir}: "
            f"{hint}pass --proxy URL to use a running dev server"
        )
    return _served_from(root)


def _served_from(root: Path) -> BlockSource:
    # The platform loads a block from the index.html at its bundle's root.
    if not (root / BLOCK_ENTRY).is_file():
        raise DevError(f"no {BLOCK_ENTRY} in {root}: the block's frame would load a 404 and never answer")
    return BlockSource(root=root, proxy=None)


class DevSession:
    """Reads the block, then (as a context manager) runs both servers."""

    def __init__(self, options: DevOptions) -> None:
        if options.theme not in THEMES:
            raise DevError(f"--theme {options.theme!r}: choose one of {', '.join(THEMES)}")
        self.options = options
        self.manifest = load_dev_manifest(options.block_dir)
        self.surface: Surface
        self.surface, surface_notes = choose_surface(self.manifest, options.surface)
        self.scenarios = parse_scenarios(options.scenarios)
        self.latency_ms = scenario_latency_ms(options.scenarios)
        self.anonymous = options.anonymous or "anonymous" in self.scenarios
        self.identity = build_identity(
            self.manifest, self.surface, options.context, anonymous=self.anonymous
        )
        self.source = resolve_source(self.manifest, options.proxy)
        self.allowed_hosts = _check_allowed_hosts(options.allowed_hosts)
        self.notes = [*self.manifest.notes, *surface_notes, *_proxy_notes(self.source)]
        self.trace_path = (options.trace_path or self.manifest.block_dir / DEFAULT_TRACE_NAME).absolute()
        self.trace: TraceLog | None = None
        self._servers: ServerPair | None = None
        self.platform: DevPlatform | None = None
        self.requests: RequestFeed | None = None
        # The host page's API asks for it (host_app.DevKeyGuard): one per run, in page_url's fragment.
        self.dev_key = new_dev_key()

    @property
    def timings(self) -> HostTimings:
        return self.options.timings

    def __enter__(self) -> DevSession:  # noqa: PYI034 - typing.Self needs Python 3.11
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        from blockkit.dev.block_app import build_block_app
        from blockkit.dev.servers import ServerPair

        # Ports first: a run that cannot listen leaves no trace file behind.
        servers = ServerPair(self.options.block_port, self.options.host_port)
        # The default trace lies in the block's own folder, whose links nobody vouches for.
        root = None if self.options.trace_path else self.manifest.block_dir.absolute()
        try:
            self.trace = TraceLog(self.trace_path, root=root)
        except DevError:
            servers.stop()
            raise
        except OSError as exc:
            servers.stop()
            raise DevError(f"cannot write the trace to {self.trace_path}: {exc.strerror or exc}") from None
        self._servers = servers
        # The block's frame calls the emulated catalogue from its origin ("null" when sandboxed opaque).
        block_origins = (servers.block_origin, *(["null"] if _opaque_frame(self.manifest.iframe.sandbox) else []))
        trace_log = self.trace

        tell = self.options.on_failed_call

        requests = self.requests = RequestFeed()

        def on_call(call: dict[str, Any]) -> None:
            # The block's own calls to the emulated catalogue, beside the bridge's in the trace,
            # and in the host page's trace panel (which cannot see the frame's requests itself).
            requests.add(trace_log.append({"kind": "call", **call}))
            if tell is not None and not call["ok"]:
                tell(call)

        try:
            self.platform = DevPlatform(self.manifest, self.surface, anonymous=self.anonymous,
                                        data_dir=self.options.platform_dir, block_origins=block_origins,
                                        on_call=on_call, allowed_hosts=self.allowed_hosts,
                                        on_note=self.options.on_note).start()
            self.platform.scenarios = self.scenarios
            self.notes = [*self.notes, *apply_scenarios(self.platform, self.scenarios)]
        except BaseException:
            if self.platform is not None:
                self.platform.stop()
                self.platform = None
            servers.stop()
            self.trace.close()
            raise
        reloads = _DevReloads()
        setup = HostSetup(
            manifest=self.manifest,
            surface=self.surface,
            identity=self.identity,
            theme=self.options.theme,
            timings=self.timings,
            block_url=servers.block_origin + "/",
            trace=self.trace,
            notes=self.notes,
            on_violation=self.options.on_violation,
            platform=self.platform,
            on_note=self.options.on_note,
            on_failed_call=self.options.on_failed_call,
            dev_reload_seen=reloads.take,
            scenarios=self.scenarios,
            latency_ms=self.latency_ms,
            requests=requests,
        )
        # Each server answers its own port's loopback names and the --allowed-host names.
        block_hosts = HostAllowlist(servers.block_port, self.allowed_hosts)
        host_hosts = HostAllowlist(servers.host_port, self.allowed_hosts)
        # The block frame's origin: its own, or "null" when the sandbox makes it opaque.
        frame_origins = OriginPolicy((block_hosts,), opaque=_opaque_frame(self.manifest.iframe.sandbox))
        try:
            block_app = build_block_app(
                self.source.root,
                self.source.proxy,
                hosts=block_hosts,
                frame_origins=frame_origins,
                # Hot reload's socket is opened by the frame; the host page may open one too.
                websocket_origins=OriginPolicy((block_hosts, host_hosts), opaque=frame_origins.opaque),
                hint=ALLOWED_HOST_HINT,
                on_note=self.options.on_note,
                on_full_reload=reloads.mark,
            )
            servers.start(block_app, build_host_app(setup, hosts=host_hosts, key=self.dev_key, hint=ALLOWED_HOST_HINT))
        except BaseException:
            servers.stop()  # closes both sockets; a no-op for servers that never started
            self.platform.stop()
            self.trace.close()
            raise

    def stop(self) -> None:
        if self.requests is not None:
            self.requests.close()  # the host page's open poll answers now, so the servers stop at once
        if self._servers is not None:
            self._servers.stop()
            self._servers = None
        if self.platform is not None:
            try:
                clear_scenarios(self.platform)  # nothing a scenario armed or set aside outlives the run
            finally:
                self.platform.stop()
                self.platform = None
        if self.trace is not None:
            self.trace.close()

    def wait(self) -> None:
        if self._servers is not None:
            self._servers.wait()

    @property
    def host_url(self) -> str:
        assert self._servers is not None, "start the session first"
        return self._servers.host_origin + "/"

    @property
    def page_url(self) -> str:
        """The URL to open: :attr:`host_url` with this run's key in the fragment (``#key=...``)."""
        return page_url(self.host_url, self.dev_key)

    def api_headers(self) -> dict[str, str]:
        """What a program calling the host page's API sends (the key, and the host page's Origin)."""
        from blockkit.dev.host_app import DEV_KEY_HEADER

        return {DEV_KEY_HEADER: self.dev_key, "origin": self.host_url.rstrip("/")}

    @property
    def block_url(self) -> str:
        assert self._servers is not None, "start the session first"
        return self._servers.block_origin + "/"

    def addresses(self) -> list[tuple[str, int]]:
        assert self._servers is not None, "start the session first"
        return self._servers.addresses()

    def events(self) -> list[dict[str, Any]]:
        return self.trace.events() if self.trace is not None else []


class _DevReloads:
    """The dev server's last full-reload order to the frame (proxy thread), asked by the host page."""

    WINDOW_S = 30.0

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._at: float | None = None

    def mark(self) -> None:
        import time

        with self._lock:
            self._at = time.monotonic()

    def take(self) -> bool:
        import time

        with self._lock:
            seen = self._at is not None and time.monotonic() - self._at <= self.WINDOW_S
            self._at = None
            return seen


def _check_allowed_hosts(names: tuple[str, ...]) -> tuple[str, ...]:
    checked = []
    for name in names:
        try:
            checked.append(check_entry(name))
        except ValueError as exc:
            raise DevError(f"--allowed-host {exc}") from None
    return tuple(checked)


def _opaque_frame(sandbox: str) -> bool:
    # Without allow-same-origin a sandboxed document has an opaque origin, "null" on the wire.
    # The frame gets the platform's sandbox for the manifest's, which never holds it.
    from blockkit.dev.transport import effective_sandbox

    return "allow-same-origin" not in effective_sandbox(sandbox).split()


def _proxy_notes(source: BlockSource) -> list[str]:
    from blockkit.dev.proxy import websockets_available

    if source.proxy is None or websockets_available():
        return []
    return ["hot reload's websocket cannot be forwarded without the `websockets` package (pip install websockets)"]
