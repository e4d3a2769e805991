#pragma once
// Umbrella header of the redlock library.

#include <redlock/client.hpp>
#include <redlock/election.hpp>
#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/fenced_store.hpp>
#include <redlock/inspection.hpp>
#include <redlock/lock.hpp>
#include <redlock/observer.hpp>
#include <redlock/options.hpp>
#include <redlock/reentrant_lock.hpp>
#include <redlock/result.hpp>
#include <redlock/scoped.hpp>
#include <redlock/semaphore.hpp>
#include <redlock/version.hpp>
