# SPDX-License-Identifier: MIT
"""How ctest runs the Python tests (tests/CMakeLists.txt): one entry per test function, chosen by
--function NAME (its parameters included), and an entry in which anything was skipped exits with
IPUSIM_SKIPPED_EXIT_CODE, so ctest reports it skipped, never passed. A module that skips itself
as it loads (an optional package missing) then skips its functions' entries; "FILE::NAME" would
instead fail them, as pytest finds no NAME in a module that did not load."""
import os


def pytest_addoption(parser):
    parser.addoption("--function", metavar="NAME", help="run only the test function NAME (exact name, all its parameters)")


def pytest_collection_modifyitems(config, items):
    name = config.getoption("--function")
    if not name:
        return
    chosen = [item for item in items if getattr(item, "originalname", item.name) == name]
    config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
    items[:] = chosen


def pytest_sessionfinish(session, exitstatus):
    # A module that skipped itself leaves no test collected (exit 5); a --function that names
    # no test also collects none, but skips nothing, and keeps its exit 5: a failure.
    code = os.environ.get("IPUSIM_SKIPPED_EXIT_CODE")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if code and exitstatus in (0, 5) and reporter is not None and reporter.stats.get("skipped"):
        session.exitstatus = int(code)


def load_model_set():
    """tools/onnx/model_set.py, the model set the build exports at full size (the tests build its
    models at small sizes)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("model_set", Path(os.environ["IPUSIM_ROOT"]) / "tools" / "onnx" / "model_set.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
