#include "process_usage.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace redlock_bench {

ProcessUsage process_usage() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  ProcessUsage result;
  result.user_us = double(usage.ru_utime.tv_sec) * 1e6 + double(usage.ru_utime.tv_usec);
  result.system_us = double(usage.ru_stime.tv_sec) * 1e6 + double(usage.ru_stime.tv_usec);
  result.voluntary_switches = usage.ru_nvcsw;
  result.involuntary_switches = usage.ru_nivcsw;
  return result;
}

double resident_mb() {
  long pages_total = 0;
  long pages_resident = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
    std::fclose(statm);
  }
  return double(pages_resident) * double(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

}  // namespace redlock_bench
