/** Labels of the update-record interface in the five supported languages (seed 001 §9.6). */
export type UpdatesLanguage = 'en' | 'zh-Hans' | 'zh-Hant' | 'ja' | 'es';

export interface UpdatesLabels {
  history: string;
  empty: string;
  saveFirst: string;
  loadFailed: string;
  major: string;
  edit: string;
  editTitle: string;
  save: string;
  saving: string;
  cancel: string;
  saveFailed: string;
  createHeading: string;
  title: string;
  details: string;
  isMajor: string;
  notifyPlayers: string;
  notifyUnavailable: string;
  reviewPending: string;
  add: string;
  added: (notified: number) => string;
  favorite: string;
  unfavorite: string;
  favorites: (n: number) => string;
  inbox: string;
  inboxEmpty: string;
  markRead: string;
  markAllRead: string;
  signInToRead: string;
  from: string;
}

const en: UpdatesLabels = {
  history: 'Update history',
  empty: 'No updates yet.',
  saveFirst: 'Save this world first to see and add update records.',
  loadFailed: 'The update history could not be loaded.',
  major: 'Major',
  edit: 'Edit',
  editTitle: 'Edit update record',
  save: 'Save',
  saving: 'Saving…',
  cancel: 'Cancel',
  saveFailed: 'Saving failed. Your text is kept; try again.',
  createHeading: 'Add an update record',
  title: 'Title',
  details: 'Details',
  isMajor: 'Major update',
  notifyPlayers: 'Notify players who favorited this world',
  notifyUnavailable: 'Notifications become available once the world is published.',
  reviewPending: 'A review of this world is pending; resolve it before adding an update record.',
  add: 'Add record',
  added: (n) => (n > 0 ? `Record added; ${n} player(s) notified.` : 'Record added.'),
  favorite: 'Favorite',
  unfavorite: 'Remove favorite',
  favorites: (n) => `${n} favorite(s)`,
  inbox: 'Inbox',
  inboxEmpty: 'No notifications.',
  markRead: 'Mark read',
  markAllRead: 'Mark all read',
  signInToRead: 'Sign in to read your notifications.',
  from: 'From',
};

const zhHans: UpdatesLabels = {
  history: '更新记录',
  empty: '暂无更新。',
  saveFirst: '请先保存此世界，才能查看和添加更新记录。',
  loadFailed: '无法加载更新记录。',
  major: '重大',
  edit: '编辑',
  editTitle: '编辑更新记录',
  save: '保存',
  saving: '正在保存…',
  cancel: '取消',
  saveFailed: '保存失败。您的内容已保留，请重试。',
  createHeading: '添加更新记录',
  title: '标题',
  details: '详情',
  isMajor: '重大更新',
  notifyPlayers: '通知收藏此世界的玩家',
  notifyUnavailable: '世界发布后才能发送通知。',
  reviewPending: '此世界有待处理的审核，请先处理审核再添加更新记录。',
  add: '添加记录',
  added: (n) => (n > 0 ? `已添加记录，已通知 ${n} 位玩家。` : '已添加记录。'),
  favorite: '收藏',
  unfavorite: '取消收藏',
  favorites: (n) => `${n} 人收藏`,
  inbox: '收件箱',
  inboxEmpty: '没有通知。',
  markRead: '标为已读',
  markAllRead: '全部标为已读',
  signInToRead: '登录后查看通知。',
  from: '来自',
};

const zhHant: UpdatesLabels = {
  history: '更新紀錄',
  empty: '尚無更新。',
  saveFirst: '請先儲存此世界，才能查看和新增更新紀錄。',
  loadFailed: '無法載入更新紀錄。',
  major: '重大',
  edit: '編輯',
  editTitle: '編輯更新紀錄',
  save: '儲存',
  saving: '正在儲存…',
  cancel: '取消',
  saveFailed: '儲存失敗。您的內容已保留，請重試。',
  createHeading: '新增更新紀錄',
  title: '標題',
  details: '詳情',
  isMajor: '重大更新',
  notifyPlayers: '通知收藏此世界的玩家',
  notifyUnavailable: '世界發佈後才能傳送通知。',
  reviewPending: '此世界有待處理的審核，請先處理審核再新增更新紀錄。',
  add: '新增紀錄',
  added: (n) => (n > 0 ? `已新增紀錄，已通知 ${n} 位玩家。` : '已新增紀錄。'),
  favorite: '收藏',
  unfavorite: '取消收藏',
  favorites: (n) => `${n} 人收藏`,
  inbox: '收件匣',
  inboxEmpty: '沒有通知。',
  markRead: '標為已讀',
  markAllRead: '全部標為已讀',
  signInToRead: '登入後查看通知。',
  from: '來自',
};

const ja: UpdatesLabels = {
  history: '更新履歴',
  empty: 'まだ更新はありません。',
  saveFirst: '更新記録を表示・追加するには、まずこのワールドを保存してください。',
  loadFailed: '更新履歴を読み込めませんでした。',
  major: '重要',
  edit: '編集',
  editTitle: '更新記録を編集',
  save: '保存',
  saving: '保存中…',
  cancel: 'キャンセル',
  saveFailed: '保存に失敗しました。入力内容は残っています。もう一度お試しください。',
  createHeading: '更新記録を追加',
  title: 'タイトル',
  details: '詳細',
  isMajor: '重要な更新',
  notifyPlayers: 'このワールドをお気に入りにしたプレイヤーに通知する',
  notifyUnavailable: '通知はワールドの公開後に利用できます。',
  reviewPending: 'このワールドは審査待ちです。更新記録を追加する前に審査を完了してください。',
  add: '記録を追加',
  added: (n) => (n > 0 ? `記録を追加し、${n} 人のプレイヤーに通知しました。` : '記録を追加しました。'),
  favorite: 'お気に入り',
  unfavorite: 'お気に入りを解除',
  favorites: (n) => `お気に入り ${n} 件`,
  inbox: '受信箱',
  inboxEmpty: '通知はありません。',
  markRead: '既読にする',
  markAllRead: 'すべて既読にする',
  signInToRead: '通知を読むにはサインインしてください。',
  from: '送信元',
};

const es: UpdatesLabels = {
  history: 'Historial de actualizaciones',
  empty: 'Todavía no hay actualizaciones.',
  saveFirst: 'Guarda primero este mundo para ver y añadir registros de actualización.',
  loadFailed: 'No se pudo cargar el historial de actualizaciones.',
  major: 'Importante',
  edit: 'Editar',
  editTitle: 'Editar registro de actualización',
  save: 'Guardar',
  saving: 'Guardando…',
  cancel: 'Cancelar',
  saveFailed: 'No se pudo guardar. Tu texto se conserva; inténtalo de nuevo.',
  createHeading: 'Añadir un registro de actualización',
  title: 'Título',
  details: 'Detalles',
  isMajor: 'Actualización importante',
  notifyPlayers: 'Avisar a los jugadores que marcaron este mundo como favorito',
  notifyUnavailable: 'Los avisos estarán disponibles cuando el mundo se publique.',
  reviewPending: 'Este mundo tiene una revisión pendiente; resuélvela antes de añadir un registro.',
  add: 'Añadir registro',
  added: (n) => (n > 0 ? `Registro añadido; se avisó a ${n} jugador(es).` : 'Registro añadido.'),
  favorite: 'Favorito',
  unfavorite: 'Quitar de favoritos',
  favorites: (n) => `${n} favorito(s)`,
  inbox: 'Bandeja de entrada',
  inboxEmpty: 'No hay avisos.',
  markRead: 'Marcar como leído',
  markAllRead: 'Marcar todo como leído',
  signInToRead: 'Inicia sesión para leer tus avisos.',
  from: 'De',
};

export const UPDATES_LABELS: Record<UpdatesLanguage, UpdatesLabels> = { en, 'zh-Hans': zhHans, 'zh-Hant': zhHant, ja, es };

/** The first supported language among the browser's preferences (Chinese script by region when unmarked). */
export function pickLanguage(preferences: readonly string[]): UpdatesLanguage {
  for (const raw of preferences) {
    const tag = raw.toLowerCase();
    if (tag.startsWith('zh')) {
      if (/hant|-(tw|hk|mo)\b/.test(tag)) return 'zh-Hant';
      return 'zh-Hans';
    }
    if (tag.startsWith('ja')) return 'ja';
    if (tag.startsWith('es')) return 'es';
    if (tag.startsWith('en')) return 'en';
  }
  return 'en';
}

export function labelsFor(language?: UpdatesLanguage): UpdatesLabels {
  const lang = language ?? (typeof navigator === 'undefined' ? 'en' : pickLanguage(navigator.languages?.length ? navigator.languages : [navigator.language]));
  return UPDATES_LABELS[lang];
}
