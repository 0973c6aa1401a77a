"""Reading a YAML config: no duplicate keys, no code, bounded size, depth and aliases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from receval_cli.errors import ConfigError

_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAX_YAML_VALUES = 100_000  # with aliases expanded; a real config holds a few hundred
_MAX_YAML_DEPTH = 100  # nested mappings and lists; a real config nests a few levels


def found_value(value: Any) -> Any:
    """`value` as an error's `found` field: itself when JSON holds it (finite numbers,
    text, lists, mappings with text keys), else its repr."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (it already refuses Python object tags) and
    documents nested so deeply that composing them would exhaust Python's stack."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > _MAX_YAML_DEPTH:
                fix = "Check the file."
                raise ConfigError(
                    f"{self.name}: the YAML nests more than {_MAX_YAML_DEPTH} levels deep; a "
                    f"config nests a few. {fix}",
                    path=self.name,
                    fix=fix,
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _TooManyDigits(Exception):
    """An integer longer than Python converts from text (sys.get_int_max_str_digits):
    where it is (the keys above it, gathered on the way up) and its length."""

    def __init__(self, line: int, digits: int) -> None:
        super().__init__(f"{digits} digits")
        self.line, self.digits = line, digits
        self.keys: list[str] = []


def _construct_int(loader: _StrictLoader, node: yaml.ScalarNode) -> Any:
    try:
        return loader.construct_yaml_int(node)
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        digits = sum(c.isdigit() for c in str(node.value))
        raise _TooManyDigits(node.start_mark.line + 1, digits) from None


def _too_many_digits(path: Path, error: _TooManyDigits) -> ConfigError:
    key = ".".join(error.keys) or None
    where = f"{key} (line {error.line})" if key else f"line {error.line}"
    fix = "Write a number a config can hold (a threshold, a count), e.g. 0.5 or 1e300."
    return ConfigError(
        f"{path}: {where} is an integer of {error.digits:,} digits, longer than any setting "
        f"takes. {fix}",
        path=path,
        key=key,
        found=f"an integer of {error.digits:,} digits",
        fix=fix,
    )


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """A mapping whose explicit keys are distinct; merge keys (`<<: *defaults`) come first
    and the explicit keys override them, as YAML's merge rule says."""
    explicit = [pair for pair in node.value if pair[0].tag != _MERGE_TAG]
    loader.flatten_mapping(node)  # node.value: the merged pairs, then `explicit`
    merged = node.value[: len(node.value) - len(explicit)]
    mapping: dict[Any, Any] = {}
    for key_node, value_node in merged:
        mapping[_mapping_key(loader, key_node)] = loader.construct_object(value_node, deep=True)
    seen: set[Any] = set()
    for key_node, value_node in explicit:
        key = _mapping_key(loader, key_node)
        if key in seen:
            line = key_node.start_mark.line + 1
            fix = "Remove one of them."
            raise ConfigError(
                f"{loader.name}: line {line}: the key '{key}' appears twice in the same "
                f"mapping; YAML would silently keep only the last. {fix}",
                path=loader.name,
                found=found_value(key),
                fix=fix,
            )
        seen.add(key)
        try:
            mapping[key] = loader.construct_object(value_node, deep=True)
        except _TooManyDigits as error:
            error.keys.insert(0, str(key))
            raise
    return mapping


def _mapping_key(loader: _StrictLoader, key_node: yaml.Node) -> Any:
    key = loader.construct_object(key_node, deep=True)
    if isinstance(key, list | dict):
        mark = key_node.start_mark
        raise ConfigError(
            f"{loader.name}: line {mark.line + 1}, column {mark.column + 1}: a key is a "
            f"{'list' if isinstance(key, list) else 'mapping'}; config keys are plain names.",
            path=loader.name,
            found=found_value(key),
        )
    return key


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _expanded_size(root: yaml.Node) -> tuple[int, int]:
    """The number of values the document holds once every alias is expanded (an alias
    repeats its anchor's whole value: a few lines can expand to billions), and the bytes
    of its scalars' text (a 1 MB string repeated 300 times is 300 MB)."""
    sizes: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()  # the current path (an alias to one of them is a cycle)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        children = _child_nodes(node)
        if finished:
            open_nodes.discard(id(node))
            parts = [sizes.get(id(child), (1, 0)) for child in children]
            scalar = isinstance(node, yaml.ScalarNode)
            own = len(node.value.encode("utf-8", "surrogatepass")) if scalar else 0
            sizes[id(node)] = (1 + sum(p[0] for p in parts), own + sum(p[1] for p in parts))
        elif id(node) not in sizes and id(node) not in open_nodes:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children)
    return sizes[id(root)]


def _child_nodes(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _yaml_fix(error: yaml.MarkedYAMLError) -> str:
    """The sentence that ends the message of a YAML error: what to do about it."""
    text = str(error)
    if "python/" in text:
        return "Tags that build Python objects are never loaded."
    if "constructor for the tag" in text:
        return "Remove the tag: a config holds plain values."
    if "undefined alias" in text:
        return "Define the anchor (&name) before its alias (*name)."
    if "recursive" in text:
        return "An alias cannot stand inside the value its anchor names."
    if "for merging" in text:
        return "A merge key takes an anchored mapping, e.g. <<: *defaults."
    return "Check the indentation (spaces, not tabs) and the quoting."


_MAX_CONFIG_BYTES = 10_000_000


def read_yaml(path: Path) -> Any:
    if not path.exists():
        fix = "Check the path."
        raise ConfigError(f"{path}: the config file does not exist. {fix}", path=path, fix=fix)
    if path.is_dir():
        fix = "Name the YAML file."
        raise ConfigError(f"{path}: is a folder, not a config file. {fix}", path=path, fix=fix)
    try:
        with path.open("rb") as handle:  # a device or a FIFO never ends: read a bounded part
            data = handle.read(_MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigError(
            f"{path}: cannot read the config ({error.strerror}).",
            path=path,
            found=error.strerror,
        ) from None
    if len(data) > _MAX_CONFIG_BYTES:
        fix = "Name the YAML file."
        raise ConfigError(
            f"{path}: the config is larger than {_MAX_CONFIG_BYTES // 1_000_000} MB (or never "
            f"ends, as a device does); a config is a few kB. {fix}",
            path=path,
            fix=fix,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        byte = f"0x{data[error.start]:02x}"
        fix = "Save it as UTF-8."
        raise ConfigError(
            f"{path}: the config is not UTF-8 text (byte {byte} at line {line}, column "
            f"{column}). {fix}",
            path=path,
            found=byte,
            fix=fix,
        ) from None
    try:
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as error:  # a control character, e.g. a NUL byte
        line = text.count("\n", 0, error.position) + 1
        column = error.position - (text.rfind("\n", 0, error.position) + 1) + 1
        character = f"U+{error.character:04X}"
        fix = "Remove it."
        raise ConfigError(
            f"{path}: invalid YAML at line {line}, column {column}: the character "
            f"{character} is not allowed in YAML text. {fix}",
            path=path,
            found=character,
            fix=fix,
        ) from None
    loader.name = str(path)
    try:
        node = loader.get_single_node()
        values, size = (0, 0) if node is None else _expanded_size(node)
        if values > _MAX_YAML_VALUES:
            fix = "Remove the aliases that repeat large values."
            raise ConfigError(
                f"{path}: the YAML expands to more than {_MAX_YAML_VALUES:,} values once its "
                f"aliases (*name) are repeated; a config is far smaller. {fix}",
                path=path,
                fix=fix,
            )
        if size > _MAX_CONFIG_BYTES:
            fix = "Remove the aliases that repeat large values."
            raise ConfigError(
                f"{path}: the YAML's text expands to {size:,} bytes once its aliases (*name) "
                f"are repeated, more than {_MAX_CONFIG_BYTES // 1_000_000} MB; a config is "
                f"a few kB. {fix}",
                path=path,
                found=f"{size:,} bytes",
                fix=fix,
            )
        return None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        problem = error.problem or str(error)
        fix = _yaml_fix(error)
        raise ConfigError(
            f"{path}: invalid YAML at {where}: {problem}. {fix}",
            path=path,
            fix=fix,
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: invalid YAML: {error}", path=path) from None
    except _TooManyDigits as error:
        raise _too_many_digits(path, error) from None
    finally:
        loader.dispose()
