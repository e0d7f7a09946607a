/** Where the "report issue" button of an error toast leads. */
export const ISSUE_TRACKER_URL = 'https://github.com/filebrowser/filebrowser/issues/new';
