/*
 * rdma-lb: a run's output directory whose files are complete or absent (rdma-output-dir.h).
 */
#include "rdma-output-dir.h"

#include "ns3/log.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaOutputDir");

namespace
{

const char* const PART = ".part";

/// Creates \p dir and its parents; returns "" or the error.
std::string
MakeDirs(const std::string& dir)
{
    std::string path;
    std::stringstream ss(dir);
    std::string part;
    if (!dir.empty() && dir[0] == '/')
    {
        path = "/";
    }
    while (std::getline(ss, part, '/'))
    {
        if (part.empty())
        {
            continue;
        }
        path += part + "/";
        if (mkdir(path.c_str(), 0777) != 0 && errno != EEXIST)
        {
            return path + ": cannot create directory: " + std::strerror(errno);
        }
    }
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    {
        return dir + ": not a directory";
    }
    return "";
}

} // namespace

std::string
RdmaOutputDir::Open(const std::string& dir, const std::vector<std::string>& stale)
{
    m_dir = dir;
    m_names.clear();
    std::string e = MakeDirs(dir);
    if (!e.empty())
    {
        return e;
    }
    // Writable? A file created and removed again (mkdir succeeds on an existing read-only
    // directory; better to fail now than after the simulation).
    const std::string probe = dir + "/.rdma-lb-write-test" + PART;
    {
        std::ofstream f(probe, std::ios::binary | std::ios::trunc);
        if (!f)
        {
            return dir + ": cannot write in the output directory: " + std::strerror(errno);
        }
    }
    std::remove(probe.c_str());
    for (const std::string& name : stale)
    {
        const std::string path = dir + "/" + name;
        if (std::remove(path.c_str()) != 0 && errno != ENOENT)
        {
            return path + ": cannot remove the previous run's file: " + std::strerror(errno);
        }
    }
    NS_LOG_INFO("output directory " << dir << " open");
    return "";
}

std::string
RdmaOutputDir::Add(const std::string& name)
{
    m_names.push_back(name);
    return m_dir + "/" + name + PART;
}

std::string
RdmaOutputDir::Write(const std::string& name, const std::string& text)
{
    const std::string path = Add(name);
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f)
    {
        return path + ": cannot open for writing: " + std::strerror(errno);
    }
    f << text;
    f.close();
    if (!f)
    {
        return path + ": write failed (disk full?)";
    }
    return "";
}

std::string
RdmaOutputDir::Commit()
{
    for (const std::string& name : m_names)
    {
        const std::string to = m_dir + "/" + name;
        const std::string from = to + PART;
        if (std::rename(from.c_str(), to.c_str()) != 0)
        {
            return from + ": cannot rename to " + name + ": " + std::strerror(errno);
        }
    }
    m_names.clear();
    return "";
}

const std::string&
RdmaOutputDir::GetDirectory() const
{
    return m_dir;
}

} // namespace ns3
