export interface Shelf {
  name: string;
  root: string;
}

export function uriOf(shelf: Shelf, path: string): string {
  return `docshelf://${shelf.name}/${path.split("/").map(encodeURIComponent).join("/")}`;
}
