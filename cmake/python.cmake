# The Python wheel: liblowbit.so as lowbit/_lib/liblowbit.so and the
# shipped recipes as lowbit/recipes/*.lua.  pyproject.toml sets the
# install prefix to the package's directory and builds only lowbit_shared.
# The library finds the recipes from its own file, at ../recipes
# (LB_RECIPES_FROM_LIB in CMakeLists.txt): the two places go together.
# Included by CMakeLists.txt instead of install.cmake when SKBUILD is set.
if(NOT TARGET lowbit_shared)
  message(FATAL_ERROR "the Python package needs liblowbit.so, which is not "
    "built (LB_SHARED is OFF, or see the warning above)")
endif()
# ctypes opens the file by path, so the wheel holds one plain file: no
# version suffix and no symlinks (a wheel would store each link as a copy).
# It keeps the toolkit directories it was linked against (libnvrtc is
# often not on the loader's path).
set_property(TARGET lowbit_shared PROPERTY VERSION)
set_property(TARGET lowbit_shared PROPERTY SOVERSION)
set_target_properties(lowbit_shared PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS lowbit_shared LIBRARY DESTINATION _lib)
install(DIRECTORY recipes/ DESTINATION recipes FILES_MATCHING PATTERN "*.lua")
