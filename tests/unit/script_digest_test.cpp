// The SHA-1 digests of the Lua scripts (lib/scripts/script.hpp): a computation that
// failed or gave the wrong length yields no digest rather than an empty or garbage one,
// which the connections would send with every EVALSHA.

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>

#include "scripts/script.hpp"

namespace redlock::scripts {
namespace {

// SHA-1 of "return 1", as SCRIPT LOAD answers it.
constexpr std::string_view return_one_sha1 = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";

TEST(ScriptDigest, AFailedComputationGivesNoDigest) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> garbage{};
  garbage.fill(0xab);
  EXPECT_EQ(digest_hex(0, garbage.data(), 20), "") << "EVP_Digest failed after writing a length";
  EXPECT_EQ(digest_hex(0, garbage.data(), 0), "");
  EXPECT_EQ(digest_hex(1, garbage.data(), 16), "") << "not a SHA-1's length";
  EXPECT_EQ(digest_hex(1, garbage.data(), 32), "");
  std::string hex;
  for (int i = 0; i < 20; ++i) hex += "ab";
  EXPECT_EQ(digest_hex(1, garbage.data(), 20), hex);
}

TEST(ScriptDigest, AScriptHasTheSha1OfItsSource) {
  EXPECT_EQ(make_script("one", "return 1").sha1, return_one_sha1);
}

// What a FIPS configuration does to SHA-1: OpenSSL's default properties ask for
// fips=yes, which no loaded provider's SHA-1 offers here, so EVP_Digest fails.
TEST(ScriptDigest, AScriptMadeWhereSha1IsUnavailableHasNoDigest) {
  ASSERT_EQ(EVP_default_properties_enable_fips(nullptr, 1), 1);
  const Script script = make_script("one", "return 1");
  EVP_default_properties_enable_fips(nullptr, 0);
  EXPECT_EQ(script.sha1, "");
  EXPECT_EQ(script.source, "return 1");
}

}  // namespace
}  // namespace redlock::scripts
