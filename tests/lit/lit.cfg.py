# lit configuration for Tessera's compiler regression tests.
import os
import lit.formats

config.name = "Tessera"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".tile"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessera_obj_root, "tests", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.tessera_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# Pipelines run by tessera-compile verify the IR after every pass in tests.
config.environment["TESSERA_VERIFY_EACH_PASS"] = "1"
config.substitutions.append(("%kernels", os.path.join(config.tessera_src_root, "kernels_dsl")))

# PTX -> cubin needs nvJitLink or ptxas from a CUDA toolkit (optional).
import shutil as _shutil
_cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
if _shutil.which("ptxas") or os.path.exists(os.path.join(_cuda, "bin", "ptxas")) \
        or os.path.exists(os.path.join(_cuda, "lib64", "libnvJitLink.so")):
    config.available_features.add("cuda-assembler")
