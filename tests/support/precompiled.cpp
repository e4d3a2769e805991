// The translation unit that compiles tests/support's precompiled header (redlock_test_pch
// in cmake/RedlockTest.cmake); every test target reuses the result.
