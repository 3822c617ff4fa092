"""Commands on the whole vault: init, config, trust, reindex, status, doctor."""

from pathlib import Path
from typing import Annotated

import typer

from ...errors import InconsistentError, UsageError
from ..app import call, command, session
from ..completions import complete_config_actions, complete_profiles
from ..options import JsonOpt
from ..output import console, escape, print_json, progress_bar, queue_line, warn


@command("init")
def init(
    ctx: typer.Context,
    profile: Annotated[
        str | None,
        typer.Option("--profile", autocompletion=complete_profiles, help="Settings for a use: personal, team, research or agent (written to amem.toml).", show_default=False),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Create a vault (a folder you may keep under git)."""
    from ...wire.vault import Init

    ready = call(ctx, Init(profile))
    if json_output:
        print_json(ready)
    else:
        console.print(f"Vault ready at [bold]{escape(ready.vault)}[/] ({ready.notes} notes"
                      + (f", profile {profile})." if profile else ")."))


@command("config")
def config(
    ctx: typer.Context,
    action: Annotated[
        str, typer.Argument(autocompletion=complete_config_actions, help="show: the settings in effect for this vault and run.")
    ] = "show",
    json_output: JsonOpt = False,
) -> None:
    """Show the settings in effect, each with where it came from (default < user config
    < vault amem.toml < AMEM_* environment < flag)."""
    from ...global_options import SETTINGS
    from ...wire.vault import Config

    if action != "show":
        raise UsageError(f"unknown config action {action!r}", hint="use `amem config show`")
    flags = session(ctx).flags
    settings = call(ctx, Config({k: flags[k] for k in SETTINGS if flags.get(k) is not None}))
    if json_output:
        print_json(settings)
        return
    sources = settings.pop("sources")
    for key, value in settings.items():
        source = sources[key]
        origin = source["source"] + (f" ({source['where']})" if source["where"] else "")
        console.print(f"{key:<20} {escape(str(value)) if value is not None else '[dim]-[/]'}  [dim]{escape(origin)}[/]")


@command("trust")
def trust(
    ctx: typer.Context,
    list_: Annotated[bool, typer.Option("--list", help="List the vaults trusted, and whether their amem.toml changed since.")] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Trust this vault's amem.toml no longer.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Trust this vault's amem.toml as it is now: only then may it set what sends notes
    away or loads models (llm_url, chroma_url, model and the like; see the README).
    Recorded beside your user config, not in the vault; any change to the file needs
    trusting again."""
    from ...config import VAULT_CONFIG, revoke_trust, trust_path, trust_vault, trusted_vaults_state

    if list_ and revoke:
        raise UsageError("--list and --revoke go one at a time", hint="run amem trust twice")
    if list_:
        rows = trusted_vaults_state()
        if json_output:
            print_json({"record": str(trust_path()), "vaults": rows})
            return
        if not rows:
            console.print("[dim]No vault is trusted.[/]")
        state = {False: "", True: " [yellow](amem.toml changed since: not trusted)[/]", None: " [dim](no amem.toml)[/]"}
        for row in rows:
            console.print(f"{escape(row['vault'])}{state[row['changed']]}")
        return
    vault = Path(session(ctx).settings().dir).expanduser().resolve()
    if revoke:
        done = revoke_trust(vault)
        if json_output:
            print_json({"vault": str(vault), "revoked": done})
        else:
            console.print(f"{escape(str(vault))}: " + ("no longer trusted" if done else "was not trusted"))
        return
    if not (vault / VAULT_CONFIG).is_file():  # nothing to trust is not an error: nothing is held back
        if json_output:
            print_json({"vault": str(vault), "file": None, "settings": []})
        else:
            console.print(f"nothing to trust: {escape(str(vault))} has no {VAULT_CONFIG}")
        return
    path, held = trust_vault(vault)
    if json_output:
        print_json({"vault": str(vault), "file": str(path), "settings": held})
    else:
        allowed = f"it may set {', '.join(held)}" if held else "it sets nothing that needs trust"
        console.print(f"trusted {escape(str(path))} as it is now: {allowed}")


@command("reindex")
def reindex(
    ctx: typer.Context,
    json_output: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Rebuild the index from the note files and re-embed every note."""
    from ...wire.vault import Reindex

    show = not (quiet or json_output)
    with progress_bar(show=show) as bar:
        task = bar.add_task("Indexing", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        data = call(ctx, Reindex(), progress=progress)
    if json_output:
        print_json(data)
    else:
        console.print(f"Indexed {data.notes} notes, embedded {data.embedded}.")


@command("status")
def status(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """Counts, index health, files changed since the last index, the embedding model."""
    from ...wire.vault import VaultStatus

    result = call(ctx, VaultStatus())
    st = result.status
    if json_output:
        print_json(st)
        return
    console.print(f"[bold]Vault[/] {escape(st.vault)}")
    if result.read_only:
        console.print(f"  read-only: amem changes nothing in it; its index is kept in {escape(result.index_dir)}")
    console.print(f"  notes {st.notes}, indexed {st.indexed}, embedded {st.embedded}, links {st.links}, sequence links {st.sequence_links}, boxes {st.boxes}")
    console.print(f"  files changed since the last index: {st.pending_changes}")
    model = f"{st.embedding_model} ({st.embedding_dimensions} dimensions)" if st.embedding_model else "none yet"
    console.print(f"  embedding model: {escape(model)}; vectors: {escape(st.vector_store)}")
    console.print(f"  {queue_line(st.queue)}")
    for e in st.errors:
        console.print(f"  [red]problem:[/] {escape(e)}")


@command("doctor")
def doctor(
    ctx: typer.Context,
    fix: Annotated[
        bool, typer.Option("--fix", help="Repair from the note files (never changes a note's text) and say what was done.")
    ] = False,
    json_output: JsonOpt = False,
) -> None:
    """Check that the files, the index, the vectors, the links and the queue agree."""
    from ...wire.vault import Doctor

    result = call(ctx, Doctor(fix=fix))
    report = result.report
    if json_output:
        print_json(report)
        if not report.ok:
            raise typer.Exit(InconsistentError.exit_code)
        return
    for line in report.fixed:
        console.print(f"fixed: {escape(line)}")
    for line in report.warnings:
        warn(line)
    for problem in report.problems:
        console.print(f"[red]problem:[/] {escape(problem.kind + ': ' + problem.detail)}")
        if problem.hint:
            console.print(f"  [dim]{escape(problem.hint)}[/]")
    if not report.ok:
        if result.for_a_person:
            hint = "edit the files named above; `--fix` never changes what a person wrote"
        elif fix:
            hint = "see the problems above"
        else:
            hint = "run `amem doctor --fix` to repair the index from the files"
        raise InconsistentError(report.summary(), hint=hint)
    console.print(report.summary().capitalize() + ".")
