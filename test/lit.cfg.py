# lit configuration: every .tk, .test and .tkir file under test/ is a test. Substitutions:
#   tkc          the compiler from the build folder (%tkc_bin: its path)
#   %conformance the conformance kernels (test/conformance)
#   %ptxas       ptxas, when installed (feature "ptxas"; %ptxas_dir its folder)
import os
import lit.formats

config.name = "tk"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tk", ".test", ".tkir"]
config.excludes = ["Inputs", "conformance", "fuzz", "gpu", "difftest", "CMakeLists.txt", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tk_obj_root, "test")

path = os.pathsep.join([config.tk_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "HOME", "TK_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["TK_CACHE_DISABLE"] = "1"

# tkc by its path, for commands run with another PATH (env PATH=... %tkc_bin)
config.substitutions.append(("%tkc_bin", os.path.join(config.tk_tools_dir, "tkc")))
config.substitutions.append(("%conformance", os.path.join(config.tk_src_root, "test", "conformance")))
config.substitutions.append(("%examples", os.path.join(config.tk_src_root, "examples")))
if config.ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas_dir", os.path.dirname(config.ptxas)))
    config.substitutions.append(("%ptxas", config.ptxas))
if config.sanitize:
    config.available_features.add("sanitize")
