/*
 * rdma-lb: a run's output directory whose files are complete or absent. Every file is written
 * under a temporary name (NAME.part) and renamed to NAME only when the run commits, in the
 * order the files were added (the scenario adds summary.json last: its presence marks a
 * finished run). A run that stops early -- an error, a full disk, a signal -- leaves .part
 * files and no file that looks finished.
 */
#ifndef RDMA_OUTPUT_DIR_H
#define RDMA_OUTPUT_DIR_H

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * An output directory written by temporary names and renamed at the end (see the file
 * comment). Errors are returned as one line: the path and what went wrong.
 */
class RdmaOutputDir
{
  public:
    /**
     * Creates \p dir and its parents, checks that a file can be written there, and removes
     * the files named in \p stale, in order (the marker first: the file whose presence says
     * that a run finished), so that no output of an earlier run is left to look like this
     * run's until it commits.
     * \return "" or the error
     */
    std::string Open(const std::string& dir, const std::vector<std::string>& stale);
    /// \return the temporary path of \p name (dir/NAME.part), added to the files to commit
    std::string Add(const std::string& name);
    /// Writes \p text to \p name's temporary path (Add). \return "" or the error
    std::string Write(const std::string& name, const std::string& text);
    /// Renames every added file to its final name, in the order added. \return "" or the error
    std::string Commit();
    /// \return the directory (as given to Open)
    const std::string& GetDirectory() const;

  private:
    std::string m_dir;                //!< the directory
    std::vector<std::string> m_names; //!< files to commit, in order
};

} // namespace ns3

#endif /* RDMA_OUTPUT_DIR_H */
