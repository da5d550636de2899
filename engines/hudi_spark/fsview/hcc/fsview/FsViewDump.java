package hcc.fsview;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.apache.hudi.common.model.FileSlice;
import org.apache.hudi.common.model.HoodieFileGroup;
import org.apache.hudi.common.model.HoodieLogFile;
import org.apache.hudi.common.table.HoodieTableMetaClient;
import org.apache.hudi.common.table.timeline.HoodieInstant;
import org.apache.hudi.common.table.timeline.HoodieTimeline;
import org.apache.hudi.common.table.view.HoodieTableFileSystemView;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.storage.StoragePath;
import org.apache.hudi.storage.StoragePathInfo;
import org.apache.hudi.storage.hadoop.HadoopStorageConfiguration;

/**
 * The file slices Hudi's snapshot reader builds for a table on the local file system, as JSON on stdout.
 *
 * <p>{@code FsViewDump BASE_PATH PARTITION...}: the view is built as {@code BaseHoodieTableFileIndex#filterFiles}
 * builds it (storage listing, no metadata table): the commits-and-compaction timeline's completed instants and
 * pending compactions ({@code #getActiveTimeline}), the partition's listed files, and per partition
 * {@code getLatestMergedFileSlicesBeforeOrOn} at the timeline's last instant (the reader's slices). Per file
 * group also every slice the view holds ({@code getAllFileSlicesIncludingInflight}) and the committed ones
 * ({@code getAllFileSlices}). The same source runs on whichever Hudi release's jars are on the classpath.
 */
public final class FsViewDump {
  private FsViewDump() {
  }

  public static void main(String[] args) throws Exception {
    String base = args[0];
    HoodieTableMetaClient meta = HoodieTableMetaClient.builder()
        .setConf(new HadoopStorageConfiguration(true)).setBasePath(base).build();
    HoodieTimeline timeline = meta.getCommitsAndCompactionTimeline().filterCompletedAndCompactionInstants();
    Option<HoodieInstant> last = timeline.lastInstant();
    List<StoragePathInfo> files = new ArrayList<>();
    for (int i = 1; i < args.length; i++) {
      files.addAll(meta.getStorage().listDirectEntries(new StoragePath(base, args[i])));
    }
    StringBuilder out = new StringBuilder("{\"timeline\": [");
    out.append(timeline.getInstants().stream()
        .map(x -> q(x.requestedTime() + "_" + x.getCompletionTime() + "." + x.getAction()))
        .collect(Collectors.joining(", ")));
    out.append("], \"query_instant\": ").append(last.isPresent() ? q(last.get().requestedTime()) : "null");
    out.append(", \"partitions\": {");
    try (HoodieTableFileSystemView view = new HoodieTableFileSystemView(meta, timeline, files)) {
      for (int i = 1; i < args.length; i++) {
        String partition = args[i];
        out.append(i > 1 ? ", " : "").append(q(partition)).append(": {\"file_groups\": [");
        List<HoodieFileGroup> groups = view.getAllFileGroups(partition).collect(Collectors.toList());
        for (int g = 0; g < groups.size(); g++) {
          HoodieFileGroup fg = groups.get(g);
          out.append(g > 0 ? ", " : "").append("{\"file_id\": ").append(q(fg.getFileGroupId().getFileId()))
              .append(", \"all_slices\": ").append(slices(fg.getAllFileSlicesIncludingInflight()
                  .collect(Collectors.toList())))
              .append(", \"committed_slices\": ").append(slices(fg.getAllFileSlices()
                  .collect(Collectors.toList())))
              .append("}");
        }
        List<FileSlice> read = last.isPresent()
            ? view.getLatestMergedFileSlicesBeforeOrOn(partition, last.get().requestedTime())
                .collect(Collectors.toList())
            : new ArrayList<>();
        out.append("], \"reader_slices\": ").append(slices(read)).append("}");
      }
    }
    out.append("}}");
    System.out.println(out);
  }

  private static String slices(List<FileSlice> slices) {
    return "[" + slices.stream().map(s -> "{\"file_id\": " + q(s.getFileId())
        + ", \"base_instant\": " + q(s.getBaseInstantTime())
        + ", \"base_file\": " + (s.getBaseFile().isPresent() ? q(s.getBaseFile().get().getFileName()) : "null")
        + ", \"log_files\": [" + s.getLogFiles().map(HoodieLogFile::getFileName).map(FsViewDump::q)
            .collect(Collectors.joining(", ")) + "]}")
        .collect(Collectors.joining(", ")) + "]";
  }

  private static String q(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
