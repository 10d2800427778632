# cmake --install: the header, liblowbit.so.0 (where it is built) and
# liblowbit.a, the lowbit tool, the shipped recipes, and what
# find_package(lowbit) and pkg-config read.  Included by CMakeLists.txt.
include(CMakePackageConfigHelpers)
set(LB_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lowbit)

set(LB_LIBS lowbit)
if(TARGET lowbit_shared)
  list(APPEND LB_LIBS lowbit_shared)
endif()
# Installed binaries keep the directories outside the build tree they were
# linked against (the toolkit's libnvrtc and libcublas are often not on the
# loader's path); the build tree's own go.
set_target_properties(${LB_LIBS} lowbit-cli-installed PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${LB_LIBS} EXPORT lowbitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS lowbit-cli-installed RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/lowbit.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY recipes/ DESTINATION ${LB_RECIPE_INSTALL_DIR}
  FILES_MATCHING PATTERN "*.lua")

# find_package(lowbit): lowbit::lowbit (the shared library where it is
# built) and lowbit::lowbit_static.  The tool is no target of the package.
install(EXPORT lowbitTargets NAMESPACE lowbit::
  DESTINATION ${LB_CMAKE_INSTALL_DIR})
get_filename_component(LB_LUA_LIBRARY_DIR ${LUA_LIBRARY} DIRECTORY)
configure_package_config_file(cmake/lowbitConfig.cmake.in
  ${CMAKE_BINARY_DIR}/lowbitConfig.cmake
  INSTALL_DESTINATION ${LB_CMAKE_INSTALL_DIR}
  PATH_VARS LB_RECIPE_INSTALL_DIR)
# 0.x: a minor version may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/lowbitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/lowbitConfig.cmake
  ${CMAKE_BINARY_DIR}/lowbitConfigVersion.cmake
  DESTINATION ${LB_CMAKE_INSTALL_DIR})

# pkg-config: lowbit.pc names the prefix it is installed under, which
# `cmake --install --prefix P` sets only at install time.  So the file is
# prepared here with every other value, and finished by the install
# script with the prefix it is given.
if(IS_ABSOLUTE ${CMAKE_INSTALL_LIBDIR})
  set(LB_PC_LIBDIR ${CMAKE_INSTALL_LIBDIR})
else()
  set(LB_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE ${CMAKE_INSTALL_INCLUDEDIR})
  set(LB_PC_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
else()
  set(LB_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
if(IS_ABSOLUTE ${LB_RECIPE_INSTALL_DIR})
  set(LB_PC_RECIPEDIR ${LB_RECIPE_INSTALL_DIR})
else()
  set(LB_PC_RECIPEDIR "\${prefix}/${LB_RECIPE_INSTALL_DIR}")
endif()
# What liblowbit.a needs (pkg-config --static); liblowbit.so needs nothing.
set(LB_PC_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} -lnvrtc")
string(APPEND LB_PC_PRIVATE " -L${LB_LUA_LIBRARY_DIR} -llua5.4 -lm")
if(CMAKE_DL_LIBS)
  string(APPEND LB_PC_PRIVATE " -l${CMAKE_DL_LIBS}")
endif()
set(LB_PC_PREFIX "@LB_PC_PREFIX@")
configure_file(cmake/lowbit.pc.in ${CMAKE_BINARY_DIR}/lowbit.pc.in @ONLY)
install(CODE "
set(LB_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
set(pc \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/lowbit.pc\")
if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
  set(pc \"\$ENV{DESTDIR}${CMAKE_INSTALL_LIBDIR}/pkgconfig/lowbit.pc\")
endif()
message(STATUS \"Installing: \${pc}\")
configure_file(\"${CMAKE_BINARY_DIR}/lowbit.pc.in\" \"\${pc}\" @ONLY)
list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${pc}\")
")
