"""`python -m amem_cli.llm.endpoint ARGS`: llama-cpp-python's OpenAI-compatible server
(`python -m llama_cpp.server ARGS`, same arguments) with the AMX workaround of
`amem_cli.llm.llamacpp` applied, so it does not crash on CPUs with Intel AMX.

Needs the server extra: ``pip install 'llama-cpp-python[server]'``.
"""

from __future__ import annotations


def main() -> None:
    from amem_cli.llm.llamacpp import cpu_has_amx, disable_extra_buffers_globally

    if cpu_has_amx():
        disable_extra_buffers_globally()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
