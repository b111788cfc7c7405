"""Jinja2 rendering of the prompt templates (PRM-10..14): sandboxed, strict, overridable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.loaders import split_template_path
from jinja2.sandbox import SandboxedEnvironment

from aidd.errors import TemplateError, ValidationError
from aidd.fsio import FileTooLargeError, UnsafePathError, read_file
from aidd.project import limits
from aidd.project.paths import ProjectPaths
from aidd.prompts.codecache import CodeCache, Reference
from aidd.prompts.context import Namespace, PromptContext
from aidd.prompts.select import PromptKind
from aidd.resources import data_dir

# A file at `.automaker/prompts/<path>` wins over the shipped `prompts/<path>`; the shipped one
# stays reachable as `builtin/<path>` so an override can include or extend it (PRM-12). Every
# Jinja failure becomes a `TemplateError` naming the file and line (PRM-13). Values such as the
# directive and audit bodies are context variables: Jinja inserts them as text, never renders them.
# Block tags swallow their own line (`trim_blocks`, `lstrip_blocks`), so templates stay readable.

BUILTIN_PREFIX = "builtin"
LAYOUT_TEMPLATES = ("_base.md", "_filter.md", "nudge.md")
_SKIPPED_DIRS = ("audits",)  # audit definitions are data, never templates


class _StrictUndefined(jinja2.StrictUndefined):
    """StrictUndefined whose message names the dotted variable (`audit.nme`)."""

    __slots__ = ()

    @property
    def _undefined_message(self) -> str:
        obj = self._undefined_obj
        if isinstance(obj, Namespace) and isinstance(self._undefined_name, str):
            return f"'{obj.dotted_name}.{self._undefined_name}' is undefined"
        return str(super()._undefined_message)


_Reference = Reference  # a template name, whether it may be missing, the line


def _static_references(tree: nodes.Template) -> list[_Reference]:
    """The names a template extends, includes or imports as constants (a name computed at
    render time, e.g. the CLI partial, is not known before)."""
    found = []
    for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
        target = getattr(node, "template", None)
        if isinstance(target, nodes.Const) and isinstance(target.value, str):
            found.append((target.value, bool(getattr(node, "ignore_missing", False)),
                          node.lineno))
    return found


class OverrideLoader(jinja2.BaseLoader):
    """Looks a template up in the project's overrides first, then in the shipped prompts."""

    def __init__(self, builtin: Path, overrides: Path | None, project_root: Path | None,
                 cache: CodeCache | None = None) -> None:
        self.builtin = builtin
        self.overrides = overrides
        self.project_root = project_root
        self.cache = cache  # compiled templates kept between runs (prompts/codecache)
        # What each template loaded since the last look names (`references`), from its parse.
        self._references: dict[str, tuple[str, list[_Reference]]] = {}

    def load(self, environment: jinja2.Environment, name: str,
             globals: MutableMapping[str, Any] | None = None) -> jinja2.Template:
        """`BaseLoader.load` with the parse kept for `references`: parsing each template a
        second time to find its includes was a quarter of a run's start (issue 33). The code
        and includes compiled from this very source by an earlier run are taken as they are."""
        source, filename, uptodate = self.get_source(environment, name)
        cache = self.cache
        kept = cache.get(environment, name, filename, source) if cache is not None else None
        if kept is None:
            tree = environment.parse(source, name, filename)
            kept = (tuple(_static_references(tree)), environment.compile(tree, name, filename))
            if cache is not None:
                cache.put(environment, name, filename, source, kept)
        references, code = kept
        self._references[name] = (filename, list(references))
        return environment.template_class.from_code(
            environment, code, environment.make_globals(globals), uptodate)

    def references(self, environment: jinja2.Environment,
                   name: str) -> tuple[str, list[_Reference]]:
        """The file of a loaded template and the static names it extends, includes or
        imports (name, ignore missing, line)."""
        known = self._references.pop(name, None)
        if known is not None:
            return known
        source, filename, _ = self.get_source(environment, name)
        return filename, _static_references(environment.parse(source, name, filename))

    def _read(self, path: Path) -> str:
        """A project override is project content (issue 13 items 7, 8): a regular file inside
        the project, capped; a link out of the project or a FIFO is refused."""
        if self.project_root is not None and self._overridden(path):
            return read_file(self.project_root, path, limits.PROMPT_OVERRIDE).decode("utf-8")
        return path.read_text(encoding="utf-8")

    def locate(self, name: str) -> Path | None:
        try:
            pieces = split_template_path(name)  # refuses `..` and empty parts
        except jinja2.TemplateNotFound:
            return None
        if pieces and pieces[0] == BUILTIN_PREFIX:
            return _file(self.builtin.joinpath(*pieces[1:]))
        if self.overrides is not None:
            found = _file(self.overrides.joinpath(*pieces))
            if found is not None:
                return found
        return _file(self.builtin.joinpath(*pieces))

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        path = self.locate(template)
        if path is None:
            raise jinja2.TemplateNotFound(template)
        try:
            source = self._read(path)
            mtime = path.stat().st_mtime
        except (UnsafePathError, FileTooLargeError) as exc:  # project content refused: exit 7
            where = self.display(str(path))
            raise ValidationError(f"prompt override refused: {exc.strerror}, {where}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TemplateError(f"cannot read template: {exc}, {self.display(str(path))}") from None
        if not self._overridden(path):  # aidd's own: the same for the whole run
            return source, str(path), _always
        return source, str(path), lambda: _mtime(path) == mtime

    def _overridden(self, path: Path) -> bool:
        return self.overrides is not None and path.is_relative_to(self.overrides)

    def list_templates(self) -> list[str]:
        names = set(_relative_files(self.builtin))
        if self.overrides is not None:
            names.update(_relative_files(self.overrides))
        return sorted(names)

    def overridden(self) -> tuple[str, ...]:
        """Every file of the override folder, project-relative, for the header (PRM-12)."""
        if self.overrides is None:
            return ()
        files = _relative_files(self.overrides, templates_only=False)
        return tuple(self.display(str(self.overrides / rel)) for rel in files)

    def display(self, filename: str | None) -> str:
        """`.automaker/prompts/x.md` for an override, `builtin/x.md` for a shipped file."""
        if not filename:
            return "<template>"
        path = Path(filename)
        if self.overrides is not None and path.is_relative_to(self.overrides):
            root = self.project_root or self.overrides
            return path.relative_to(root).as_posix() if path.is_relative_to(root) else filename
        if path.is_relative_to(self.builtin):
            return f"{BUILTIN_PREFIX}/{path.relative_to(self.builtin).as_posix()}"
        return filename


class PromptRenderer:
    """Compiles and renders the templates of one project (or none: shipped templates only)."""

    def __init__(
        self,
        overrides: Path | None = None,
        *,
        project_root: Path | None = None,
        builtin: Path | None = None,
        cache: CodeCache | None = None,
    ) -> None:
        self.loader = OverrideLoader(builtin or data_dir("prompts"), overrides, project_root,
                                     cache)
        self.env = SandboxedEnvironment(
            loader=self.loader,
            undefined=_StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )

    @classmethod
    def for_project(cls, paths: ProjectPaths, builtin: Path | None = None,
                    cache: CodeCache | None = None) -> PromptRenderer:
        return cls(paths.prompt_overrides, project_root=paths.root, builtin=builtin,
                   cache=cache)

    def overridden_files(self) -> tuple[str, ...]:
        return self.loader.overridden()

    def compile_all(
        self,
        cli: str,
        kinds: Iterable[PromptKind] = tuple(PromptKind),
        sample: PromptContext | None = None,
    ) -> list[str]:
        """Compile every template the run may use and check that static includes exist.

        With a `sample` context, also render each kind and the nudge once, so an undefined
        variable in an override surfaces now rather than in a later phase. Raises TemplateError
        naming file and line, before any agent starts (PRM-13).
        """
        kinds = tuple(kinds)
        pending = [k.template for k in kinds] + [*LAYOUT_TEMPLATES, f"_cli/{cli}.md"]
        pending += [n for n in self.loader.list_templates() if n.startswith("_common/")]
        done: list[str] = []
        while pending:
            name = pending.pop(0)
            if name not in done:
                done.append(name)
                pending.extend(self._compile(name))
        if sample is not None:
            for kind in kinds:
                self.render_prompt(sample._replace(kind=kind))
            self.render_nudge(sample)
        return done

    def render(self, name: str, context: PromptContext) -> str:
        with self._errors():
            return self.env.get_template(name).render(context.to_dict())

    def render_prompt(self, context: PromptContext) -> str:
        return self.render(context.kind.template, context)

    def render_nudge(self, context: PromptContext) -> str:
        return self.render("nudge.md", context)

    def _compile(self, name: str) -> list[str]:
        """Compile one template; return the static names it extends, includes or imports."""
        with self._errors():
            self.env.get_template(name)
            filename, references = self.loader.references(self.env, name)
        referenced: list[str] = []
        for target, ignore_missing, line in references:
            if self.loader.locate(target) is None:
                if ignore_missing:
                    continue
                where = f"{self.loader.display(filename)}:{line}"
                raise TemplateError(f"template not found: {target}, {where}")
            referenced.append(target)
        return referenced

    def _errors(self) -> _ErrorTranslator:
        return _ErrorTranslator(self.loader)


class _ErrorTranslator:
    """Context manager turning Jinja exceptions into TemplateError with file and line."""

    def __init__(self, loader: OverrideLoader) -> None:
        self.loader = loader

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None or isinstance(exc, TemplateError):
            return
        if isinstance(exc, jinja2.TemplateSyntaxError):
            where = f"{self.loader.display(exc.filename or exc.name)}:{exc.lineno}"
            raise TemplateError(f"template syntax error: {exc.message}, {where}") from exc
        if isinstance(exc, jinja2.UndefinedError):
            raise TemplateError(f"undefined variable {exc.message}, {self._where(tb)}") from exc
        if isinstance(exc, jinja2.TemplateNotFound):
            raise TemplateError(f"template not found: {exc.name}, {self._where(tb)}") from exc
        if isinstance(exc, jinja2.TemplateError):
            raise TemplateError(f"template error: {exc}, {self._where(tb)}") from exc
        if isinstance(exc, RecursionError):
            where = self._where(tb)
            raise TemplateError(f"templates include each other endlessly, {where}") from exc

    def _where(self, tb: TracebackType | None) -> str:
        """The innermost template frame: Jinja maps its line number to the template source."""
        where = "<template>"
        for frame_tb in _frames(tb):
            filename = frame_tb.tb_frame.f_code.co_filename
            if self._is_template(filename):
                where = f"{self.loader.display(filename)}:{frame_tb.tb_lineno}"
        return where

    def _is_template(self, filename: str) -> bool:
        path = Path(filename)
        roots = [self.loader.builtin, *([self.loader.overrides] if self.loader.overrides else [])]
        return any(path.is_relative_to(root) for root in roots)


def _frames(tb: TracebackType | None) -> Iterator[TracebackType]:
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _file(path: Path) -> Path | None:
    return path if path.is_file() else None


def _always() -> bool:
    """A shipped template is up to date: it is looked at again only by the next run (an
    override is, at each render: 16 stats a prompt, issue 33)."""
    return True


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _relative_files(root: Path, *, templates_only: bool = True) -> list[str]:
    if not root.is_dir():
        return []
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and not (templates_only and rel.parts[0] in _SKIPPED_DIRS):
            out.append(rel.as_posix())
    return sorted(out)
