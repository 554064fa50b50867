// Fold long code blocks on the rendered page.
function foldCodeBlocks(root, maxLines) {
  for (const block of root.querySelectorAll("pre")) {
    if (block.textContent.split("\n").length > maxLines) {
      block.classList.add("folded");
    }
  }
}
