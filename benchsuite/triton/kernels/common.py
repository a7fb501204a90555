"""What the kernel modules share: dtypes, argument and plan records, and
the parsing of --shape/--config values."""

from dataclasses import dataclass, field

# Tessera dtype -> (Triton storage type, tl.dot input_precision). tf32 is
# f32 data whose dot products use TF32 tensor cores; f32 dots stay IEEE.
DTYPES = {
    "f32": ("fp32", "ieee"),
    "tf32": ("fp32", "tf32"),
    "f16": ("fp16", None),
    "bf16": ("bf16", None),
    "fp8_e4m3": ("fp8e4nv", None),
    "fp8_e5m2": ("fp8e5", None),
}

# Other spellings of the same dtypes (Tessera's precision policies).
_ALIASES = {"fp32": "f32", "fp16": "f16"}

# Storage types Triton 3.9 converts to and from on each target.
_ARCH_DTYPES = {
    "sm_80": {"f32", "tf32", "f16", "bf16", "fp8_e5m2"},
    "sm_90a": set(DTYPES),
}

ARCHS = {"sm_80": 80, "sm_90a": 90}

# The largest row the row kernels keep in registers, in bytes of storage
# (the MAX_FUSED_SIZE of Triton's layer-norm tutorial).
MAX_FUSED_BYTES = 65536


class UsageError(Exception):
    """A request the driver rejects: unknown name, bad value. Exit 2."""


def canonical_dtype(text):
    """Tessera's dtype name for `text` ("fp16", "bf16@accum(fp32)", ...)."""
    name = text.split("@", 1)[0].strip().lower()
    return _ALIASES.get(name, name)


def check_arch_dtype(arch, dtype):
    if dtype not in _ARCH_DTYPES[arch]:
        raise UsageError(f"Triton has no {dtype} on {arch}")


def storage_bytes(dtype):
    return {"fp32": 4, "fp16": 2, "bf16": 2}.get(DTYPES[dtype][0], 1)


@dataclass
class Arg:
    """One run-time parameter of a Triton kernel, in declaration order.

    kind is "pointer", "int" or "float". Pointers carry their element type,
    ints the value the launch passes (strides and sizes from --shape),
    floats a default the launcher may replace (alpha, eps, ...)."""
    name: str
    kind: str
    dtype: str = None
    value: object = None
    role: str = ""


def ptr(name, dtype, role=""):
    return Arg(name, "pointer", dtype=dtype, role=role)


def integer(name, value, role=""):
    return Arg(name, "int", value=int(value), role=role)


def real(name, value, role=""):
    return Arg(name, "float", value=float(value), role=role)


def strides(prefix, dims, letters):
    """Int args for the strides of a contiguous tensor of shape `dims`."""
    out, step = [], 1
    for size, letter in reversed(list(zip(dims, letters))):
        out.append(integer(f"stride_{prefix}{letter}", step,
                           f"stride of {prefix} along {letter}"))
        step *= size
    return list(reversed(out))


@dataclass
class Plan:
    """Everything needed to compile one kernel as a launch would."""
    fn: object
    args: list
    constexprs: dict
    num_warps: int
    num_stages: int
    config: dict
    grid: str           # how the grid follows from the shape
    grid_dims: tuple    # the grid for this shape, (x, y, z)
    shape: dict
    notes: list = field(default_factory=list)


def next_pow2(n):
    return 1 << max(0, int(n) - 1).bit_length()


class Values:
    """K=V pairs from --shape or --config, read by name with checks.

    Keys are matched exactly, then case-insensitively. Every read marks the
    key used; `unused()` lists the rest (ignored with a note)."""

    def __init__(self, option, pairs):
        self.option = option
        self.pairs = dict(pairs)
        self.used = set()

    def _find(self, names):
        for name in names:
            if name in self.pairs:
                return name
        lowered = {k.lower(): k for k in self.pairs}
        for name in names:
            if name.lower() in lowered:
                return lowered[name.lower()]
        return None

    def has(self, *names):
        return self._find(names) is not None

    def take(self, name):
        """The raw text of `name` (marked used), or None."""
        key = self._find((name,))
        if key is None:
            return None
        self.used.add(key)
        return self.pairs[key]

    def int(self, names, default, minimum=1, pow2=False, choices=None):
        names = (names,) if isinstance(names, str) else names
        key = self._find(names)
        if key is None:
            return default
        self.used.add(key)
        text = self.pairs[key]
        try:
            value = int(text, 0)
        except ValueError:
            raise UsageError(f"{self.option} {key}={text}: not an integer")
        if value < minimum:
            raise UsageError(f"{self.option} {key}={value}: below {minimum}")
        if pow2 and value & (value - 1):
            raise UsageError(f"{self.option} {key}={value}: not a power of 2")
        if choices and value not in choices:
            raise UsageError(f"{self.option} {key}={value}: one of "
                             f"{', '.join(map(str, choices))} expected")
        return value

    def flag(self, names, default=False):
        names = (names,) if isinstance(names, str) else names
        key = self._find(names)
        if key is None:
            return default
        self.used.add(key)
        text = self.pairs[key].lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"{self.option} {key}={text}: not a boolean")

    def unused(self):
        return sorted(set(self.pairs) - self.used)


def warps(config, default=4):
    """num_warps (1, 2, 4, ..., 32) from --config."""
    return config.int("num_warps", default, choices=(1, 2, 4, 8, 16, 32))


def warps_and_stages(config, default_warps=4, default_stages=3):
    """num_warps and num_stages (>= 1) from --config."""
    return (warps(config, default_warps),
            config.int("num_stages", default_stages))
