"""``deniable serve``: the web app (survey pages, JSON API, dashboard) under gunicorn."""

from __future__ import annotations

import os

import click

from deniable.errors import DeniableError

from .common import database, db_option, fail


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Number of gunicorn worker processes.")
@click.option("--connections", default=4000, show_default=True, type=click.IntRange(10, 100_000),
              help="Simultaneous connections per worker (gevent: a slow client costs a greenlet, not a thread); "
                   "the open-file limit is raised to fit, up to its hard limit.")
@click.option("--connections-per-address", default=256, show_default=True, type=click.IntRange(0, 1_000_000),
              metavar="N", envvar="DENIABLE_CONNECTIONS_PER_ADDRESS", show_envvar=True,
              help="Connections one client address may hold open at once, over all workers (an IPv6 address: "
                   "its /64); one more is reset as soon as it is accepted, before anything is read.  0: no bound.  "
                   "Not applied behind a reverse proxy (DENIABLE_PROXY_FIX_X_FOR set), where every connection "
                   "comes from the proxy: bound connections per client there.")
@click.option("--read-timeout", default=15.0, show_default=True, type=click.FloatRange(0.5, 3600),
              metavar="SECONDS", help="A request must arrive whole (request line, headers, body) within this "
              "time, or its connection is closed; an idle keep-alive connection is closed after it too.")
@click.option("--public-host", "public_hosts", multiple=True, metavar="NAME",
              help="A host name the server answers to besides localhost (repeatable), e.g. survey.example.org.")
@click.option("--base-url", metavar="URL",
              help="How links for people outside begin (invitation links), e.g. https://survey.example.org "
                   "[default: http://HOST:PORT of the first public host, else of --host].")
@db_option()
@click.option("--demo", is_flag=True, help="Create (if absent) and open the demo survey 'demo'; print its login "
              "(the same password at every start, kept in FILE.demo-password).")
@click.option("--reset-demo-password", is_flag=True,
              help="With --demo: give the demo researcher a new password, ending every session made with the old one.")
def serve(host, port, workers, connections, connections_per_address, read_timeout, public_hosts, base_url, db_path,
          demo, reset_demo_password) -> None:
    """Serve the survey pages, the JSON API and the dashboard with gunicorn.

    The database schema is created or upgraded before the workers start; the app is loaded
    once and forked, so all workers share the same secret key (``FILE.secret``) and the same
    rate-limit counters (in shared memory).  Workers are gevent workers that read every request
    whole (chunked bodies too) within --read-timeout before the app sees it, so slow or silent
    clients cannot stall the server, and one address holds at most --connections-per-address
    connections at once, so it cannot take every connection either.  The server answers only to
    localhost and the --public-host names.  No request writes a log line: what goes wrong is
    counted and summarised at most once a day, without times or addresses; there is no access
    log.  Files are created readable by their owner only.

    \b
    Example:
        deniable serve --port 8000 --workers 4 --db deniable.db --demo
        deniable serve --demo --reset-demo-password
        deniable serve --host 0.0.0.0 --public-host survey.example.org --base-url https://survey.example.org
    """
    import json

    from deniable.server.store.demo import demo_login, ensure_demo

    os.umask(0o077)  # everything this process and its workers create: the owner's only
    db_path = os.path.abspath(db_path)
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    shown_host = f"[{shown_host}]" if ":" in shown_host else shown_host
    trusted = ["localhost", "127.0.0.1", *public_hosts]
    if shown_host not in trusted and not shown_host.startswith("["):
        trusted.append(shown_host)  # served by address: answer to it
    base_url = (base_url or f"http://{public_hosts[0] if public_hosts else shown_host}:{port}").rstrip("/")
    if reset_demo_password and not demo:
        raise click.UsageError("--reset-demo-password goes with --demo")
    from deniable.server.store.backup import hold_serving_lock

    hold_serving_lock(db_path)  # for the server's life: `deniable restore` refuses meanwhile (a BackupError:
    # one line, as the deniable group says every DeniableError)
    with database(db_path, create=True) as db:
        if demo:
            email, password, researcher_id = demo_login(db, db_path, reset_demo_password)
            if reset_demo_password:  # always a new password
                click.echo("The demo researcher has a new password; every earlier session has ended.", err=True)
            stored = ensure_demo(db, owner_id=researcher_id)
            note = "" if stored.status == "open" else f" (it is {stored.status})"
            click.echo(f"Demo survey: {base_url}/s/{stored.slug}{note}")
            click.echo(f"Dashboard:   {base_url}/dashboard/  (log in as {email} with password {password})")
        from deniable.server.store import integrity

        checked = integrity.summary(*integrity.repair_quick(db))  # the aggregates' totals, repaired: said below
        from deniable.server.store.scrub import scrub_before_answering

        if not scrub_before_answering(db, 10.0):  # what a crash left in the WAL goes before the server listens
            fail(f"{db_path}: another process keeps reading the database, so its WAL cannot be scrubbed; "
                 "stop it and start again")
    if host in ("0.0.0.0", "::", "") and not public_hosts:
        click.echo("Note: listening on every address but answering only to localhost and 127.0.0.1; "
                   "give --public-host NAME for the name people will use.", err=True)
    os.environ["DENIABLE_DATABASE"] = db_path
    os.environ["DENIABLE_TRUSTED_HOSTS"] = json.dumps(sorted(set(trusted) | _env_hosts()))
    os.environ["DENIABLE_BASE_URL"] = base_url
    try:  # the configuration is checked here, so a bad setting is one line, not a worker traceback
        from deniable.server.web.app import create_app

        app = create_app()
    except DeniableError as exc:  # a setting that does not parse (a FieldError naming it)
        fail(f"configuration: {exc}")
    click.echo(checked, err=True)
    from deniable.server.store import scrub

    scrub.start(db_path, float(app.config["SCRUB_SECONDS"]))  # file times on a timer from the start
    from . import serving

    serving.READ_SECONDS = read_timeout  # the workers are forked from this process
    connections = _open_files_for(connections)
    bound = per_address_bound(connections_per_address, app.config)
    if bound:  # made here, before the fork: every worker counts in the same shared table
        from deniable.server.web.ratelimit_storage import ConnectionCounts

        serving.PER_ADDRESS = ConnectionCounts(bound, columns=2 * workers + 1, connections=connections)
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    serving.run_gunicorn({
        "bind": bind,
        "workers": workers,
        "worker_class": f"{serving.Worker.__module__}.{serving.Worker.__qualname__}",
        "worker_connections": connections,
        "logger_class": f"{serving.Logger.__module__}.{serving.Logger.__qualname__}",
        "preload_app": True,
        "accesslog": None,
        "errorlog": "-",
        "loglevel": "info",
        "proc_name": "deniable",
        "control_socket_disable": True,  # gunicorn ≥ 27: no shared socket in the home directory
        **serving.HOOKS,  # the master gives each worker its column of the connection counts, and empties it
    })


def per_address_bound(bound: int, config) -> int:
    """The bound on one address's open connections that ``serve`` applies: ``bound``
    (``--connections-per-address``), or 0 (none) behind a reverse proxy.

    With ``PROXY_FIX_X_FOR`` set every connection comes from the proxy (a client that could reach
    the server past it could write its own ``X-Forwarded-For`` and every rate limit would count
    the address it wrote), so a bound per connecting address would be a bound on the whole site:
    the proxy, which sees the clients, bounds them (docs/running.md has nginx's ``limit_conn``).
    """
    if bound and int(config.get("PROXY_FIX_X_FOR", 0) or 0):
        click.echo(f"Note: behind a reverse proxy (PROXY_FIX_X_FOR) every connection comes from the proxy, so "
                   f"--connections-per-address {bound} is not applied; bound the connections per client at the "
                   "proxy (nginx: limit_conn).", err=True)
        return 0
    return bound


def _open_files_for(connections: int) -> int:
    """Raise this process's soft open-file limit (the workers inherit it) so that every worker can
    hold ``connections`` sockets; fewer connections, with a note, if the hard limit is lower.

    A worker out of file descriptors would fail to accept with a traceback in the log; a full
    worker instead leaves new connections to the other workers and the listen queue.
    """
    import resource

    spare = 64  # the database, its WAL and -shm, the listening socket, the log
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + spare
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < wanted:
        connections = max(10, soft - spare)
        click.echo(f"Note: the open-file limit ({soft}) allows {connections} connections per worker; raise it "
                   "(ulimit -n, or LimitNOFILE= in a systemd unit) for more.", err=True)
    return connections


def _env_hosts() -> set[str]:
    """Host names already given in ``DENIABLE_TRUSTED_HOSTS`` (a JSON list), kept beside --public-host."""
    from deniable.server.survey import strict_json

    try:
        hosts = strict_json.loads(os.environ.get("DENIABLE_TRUSTED_HOSTS", "[]"))
    except strict_json.JSONError:  # a repeated key too (strict_json.DuplicateKeyError)
        fail("configuration: DENIABLE_TRUSTED_HOSTS must be a JSON list of host names, "
             'e.g. \'["survey.example.org"]\'')
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        fail("configuration: DENIABLE_TRUSTED_HOSTS must be a JSON list of host names")
    return set(hosts)
