# Imported targets for the Debian packages caldera builds against (see shared/STACK-NOTES.md).
find_package(Threads REQUIRED)

# CAF 0.17 ships no CMake config, no Find module and no pkg-config file.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIB caf_core REQUIRED)
find_library(CAF_IO_LIB caf_io REQUIRED)
add_library(CAF::core UNKNOWN IMPORTED)
set_target_properties(CAF::core PROPERTIES IMPORTED_LOCATION ${CAF_CORE_LIB}
  INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR} INTERFACE_LINK_LIBRARIES Threads::Threads)
add_library(CAF::io UNKNOWN IMPORTED)
set_target_properties(CAF::io PROPERTIES IMPORTED_LOCATION ${CAF_IO_LIB}
  INTERFACE_LINK_LIBRARIES CAF::core)

find_package(CapnProto 0.9 CONFIG REQUIRED)
find_package(RocksDB CONFIG REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)
# Every YAML calderad reads (jobs, flows, templates, the cluster config); yaml-cpp only checks, in
# tests, the YAML the CLI prints.
pkg_check_modules(LIBFYAML REQUIRED IMPORTED_TARGET libfyaml)
# calderad's allocator: its actors allocate messages on one thread and free them on another, where
# glibc's arenas contend; tcmalloc's thread caches cut calderad's CPU per simulated job by ~15%.
pkg_check_modules(TCMALLOC REQUIRED IMPORTED_TARGET libtcmalloc_minimal)
find_package(GTest CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
# libcrypto: the ssh job plugin's key pairs (RSA, as Volcano's).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
