// SPDX-License-Identifier: MIT
// docs/poplar.md's table of the API: every header installed is listed, and every name listed is
// declared in its header.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path& p)
{
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/** The table's rows: header -> the names in backquotes after it. */
std::map<std::string, std::vector<std::string>> tableRows()
{
    std::map<std::string, std::vector<std::string>> rows;
    std::istringstream page(readAll(fs::path(IPUSIM_SOURCE_DIR) / "docs" / "poplar.md"));
    const std::regex row(R"(^\| `([A-Za-z_/]+\.(?:hpp|h))` \| (.*) \|$)");
    const std::regex name("`([A-Za-z_0-9]+)`");
    for (std::string line; std::getline(page, line);) {
        std::smatch m;
        if (!std::regex_match(line, m, row))
            continue;
        auto& names = rows[m[1]];
        const std::string cells = m[2];
        for (std::sregex_iterator it(cells.begin(), cells.end(), name), end; it != end; ++it)
            names.push_back((*it)[1]);
    }
    return rows;
}

} // namespace

TEST_CASE("Poplar API table: every installed header is listed and every name listed is declared in it")
{
    const fs::path include = fs::path(IPUSIM_SOURCE_DIR) / "sim" / "poplar" / "include";
    const auto rows = tableRows();
    REQUIRE(rows.size() > 10);
    for (const auto& entry : fs::recursive_directory_iterator(include)) {
        if (!entry.is_regular_file())
            continue;
        const std::string header = fs::relative(entry.path(), include).string();
        INFO(header);
        CHECK(rows.count(header) == 1);
    }
    for (const auto& [header, names] : rows) {
        INFO(header);
        REQUIRE(fs::exists(include / header));
        const std::string text = readAll(include / header);
        for (const auto& n : names) {
            INFO(n);
            CHECK(std::regex_search(text, std::regex("\\b" + n + "\\b")));
        }
    }
}
